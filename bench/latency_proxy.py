#!/usr/bin/env python3
"""A TCP proxy on 127.0.0.1 that holds every chunk it forwards for DELAY seconds, in each direction and in
order: a PostgreSQL server on loopback as a client across a network would see it (round trips of a LAN).
On loopback a wait for the server costs tens of microseconds, so the round trips an ingest makes barely show
in its time there; through this proxy they cost what they would on a team's shared server.

    /usr/bin/python3 bench/latency_proxy.py LISTEN_PORT SERVER_PORT DELAY_SECONDS
    xladb ingest RUN --db "postgresql://USER@127.0.0.1:LISTEN_PORT/DB?options=-csearch_path%3DS"

With DELAY 0.0001, pgbench's `SELECT 1` takes 0.41 ms a round trip through it (0.15 ms with DELAY 0, the
proxy's own cost; 0.04 ms without the proxy) on the 2-core AMD EPYC of docs/PERFORMANCE.md. The proxy's
threads use CPU of their own, which the measured command then shares. No queueing model, no loss: a fixed
delay a chunk. Stop it with a signal."""
import queue
import socket
import sys
import threading
import time


def pump(source, destination, delay):
    """Forwards what `source` sends to `destination`, each chunk `delay` seconds after it arrived."""
    held = queue.SimpleQueue()

    def send():
        while True:
            due, data = held.get()
            if data is None:
                try:
                    destination.shutdown(socket.SHUT_WR)
                except OSError:
                    pass
                return
            wait = due - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            try:
                destination.sendall(data)
            except OSError:
                return

    threading.Thread(target=send, daemon=True).start()
    while True:
        try:
            data = source.recv(1 << 20)
        except OSError:
            data = b""
        held.put((time.monotonic() + delay, data or None))
        if not data:
            return


def main():
    listen_port, server_port, delay = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", listen_port))
    listener.listen(64)
    print(f"forwarding 127.0.0.1:{listen_port} to 127.0.0.1:{server_port}, {delay * 1e3:g} ms each way", flush=True)
    while True:
        client, _ = listener.accept()
        server = socket.create_connection(("127.0.0.1", server_port))
        for s in (client, server):
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        threading.Thread(target=pump, args=(client, server, delay), daemon=True).start()
        threading.Thread(target=pump, args=(server, client, delay), daemon=True).start()


if __name__ == "__main__":
    main()
