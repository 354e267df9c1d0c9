package dev.tidemark.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;

/**
 * Forwards a fixed loopback port to a broker's bootstrap address. A restored Kafka source connects
 * to the bootstrap address it was built with (Beam's Flink source restores the source itself from
 * the savepoint), so a savepoint fixture is made and restored through one fixed address while each
 * run's embedded broker listens on a free port. Clients only bootstrap through it: the broker's
 * metadata sends them to its own port.
 */
public final class PortForward implements AutoCloseable {
  private final ServerSocket server;
  private final String targetHost;
  private final int targetPort;
  private final List<Socket> sockets = new ArrayList<>();
  private final Thread acceptor;
  private volatile boolean closed;

  private PortForward(ServerSocket server, String target) {
    this.server = server;
    int colon = target.lastIndexOf(':');
    this.targetHost = target.substring(0, colon);
    this.targetPort = Integer.parseInt(target.substring(colon + 1));
    this.acceptor = new Thread(this::accept, "port-forward-" + server.getLocalPort());
    acceptor.setDaemon(true);
  }

  /** Listens on 127.0.0.1:{@code port} and forwards every connection to {@code target}. */
  public static PortForward open(int port, String target) throws IOException {
    ServerSocket server = new ServerSocket();
    server.setReuseAddress(true);
    try {
      server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
    } catch (IOException e) {
      server.close();
      throw new IOException(
          "cannot listen on 127.0.0.1:"
              + port
              + ", the fixed bootstrap address of the savepoint fixtures: is another test using"
              + " it?",
          e);
    }
    PortForward forward = new PortForward(server, target);
    forward.acceptor.start();
    return forward;
  }

  /** The address clients bootstrap through. */
  public String address() {
    return "127.0.0.1:" + server.getLocalPort();
  }

  private void accept() {
    while (!closed) {
      try {
        Socket client = server.accept();
        Socket broker = new Socket(targetHost, targetPort);
        synchronized (sockets) {
          sockets.add(client);
          sockets.add(broker);
        }
        pipe(client, broker);
        pipe(broker, client);
      } catch (IOException e) {
        if (!closed) {
          System.err.println("port forward: " + e);
        }
      }
    }
  }

  private static void pipe(Socket from, Socket to) {
    Thread thread =
        new Thread(
            () -> {
              byte[] buffer = new byte[16 * 1024];
              try (InputStream in = from.getInputStream();
                  OutputStream out = to.getOutputStream()) {
                for (int n; (n = in.read(buffer)) >= 0; ) {
                  out.write(buffer, 0, n);
                  out.flush();
                }
              } catch (IOException e) {
                // The other side closed.
              } finally {
                closeQuietly(from);
                closeQuietly(to);
              }
            },
            "port-forward-pipe");
    thread.setDaemon(true);
    thread.start();
  }

  private static void closeQuietly(Socket socket) {
    try {
      socket.close();
    } catch (IOException e) {
      // Closing anyway.
    }
  }

  @Override
  public void close() throws IOException {
    closed = true;
    server.close();
    synchronized (sockets) {
      sockets.forEach(PortForward::closeQuietly);
      sockets.clear();
    }
    try {
      acceptor.join(10_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
