"""Hostile clients for bench/serve_soak.sh, run beside wrk for DURATION seconds: slow clients
(slowloris), Range requests with thousands of ranges, endless headers and chunked bodies.
Usage: serve_soak_attackers.py PORT DURATION. Prints what each attacker did."""
import socket
import sys
import threading
import time

PORT, DURATION = int(sys.argv[1]), float(sys.argv[2])
END = time.time() + DURATION
counts = {"slow": 0, "range": 0, "headers": 0, "chunked": 0}
lock = threading.Lock()


def bump(k):
    with lock:
        counts[k] += 1


def connect():
    s = socket.create_connection(("127.0.0.1", PORT), timeout=5)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 64 * 1024)
    return s


def slow_clients(n=64):
    socks = []
    while time.time() < END:
        while len(socks) < n:  # the server drops them after --client-timeout: reconnect
            try:
                s = connect()
                s.sendall(b"GET /api/traces HTTP/1.1\r\nHost: 127.0.0.1\r\n")
                socks.append(s)
                bump("slow")
            except OSError:
                time.sleep(0.1)
                break
        for s in list(socks):
            try:
                s.send(b"X")
            except OSError:
                socks.remove(s)
                s.close()
        time.sleep(1.0)
    for s in socks:
        s.close()


def send_until_refused(head, piece, limit=16 << 20):
    try:
        s = connect()
        s.settimeout(2)
        s.sendall(head)
        sent = 0
        while sent < limit:
            s.sendall(piece)
            sent += len(piece)
    except OSError:
        pass
    finally:
        try:
            s.close()
        except (OSError, UnboundLocalError):
            pass


def ranges():
    req = ("GET /api/profiler/flame?trace=mlp_bs64.json.gz HTTP/1.1\r\nHost: 127.0.0.1\r\n"
           "Range: bytes=" + ",".join(["0-"] * 2600) + "\r\nConnection: close\r\n\r\n").encode()
    while time.time() < END:
        try:
            s = connect()
            s.sendall(req)
            while s.recv(1 << 20):
                pass
            s.close()
            bump("range")
        except OSError:
            time.sleep(0.05)


def headers():
    piece = b"".join(b"X-Pad-%06d: %s\r\n" % (i, b"a" * 80) for i in range(600))
    while time.time() < END:
        send_until_refused(b"GET /api/traces HTTP/1.1\r\nHost: 127.0.0.1\r\n", piece)
        bump("headers")


def chunked():
    piece = b"10000\r\n" + b"x" * 0x10000 + b"\r\n"
    while time.time() < END:
        send_until_refused(b"POST /api/traces HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                           b"Transfer-Encoding: chunked\r\n\r\n", piece)
        bump("chunked")


threads = [threading.Thread(target=f) for f in (slow_clients, ranges, headers, chunked)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print("attackers: " + ", ".join(f"{v} {k}" for k, v in counts.items()))
