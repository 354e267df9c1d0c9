package dev.tidemark.drill;

import org.junit.ClassRule;
import org.junit.rules.ExternalResource;
import org.junit.runner.RunWith;
import org.junit.runners.Suite;

/**
 * The drill module's cluster tests on one local cluster ({@link SharedCluster}): the model swap
 * first (a job on a cluster nothing has struck yet), then the drill. Failsafe runs this suite and
 * not its classes on their own (see the module's pom); {@code -Dit.test=DrillIT} still runs one
 * alone, on a cluster of its own. A new cluster test of this module joins the list and the pom's
 * excludes.
 */
@RunWith(Suite.class)
@Suite.SuiteClasses({ModelSwapClusterIT.class, DrillIT.class})
public class ClusterSuiteIT {
  @ClassRule public static final ExternalResource CLUSTER = SharedCluster.rule();
}
