#!/usr/bin/env python3
"""Open a TLS connection to HOST:PORT, send the ClientHello, read the server's first
flight and then stop, as a client whose event loop is busy does in the middle of its
handshake. Prints the CPU the process PID used over SECONDS meanwhile, as a share of one
core ("cpu=0.01"). Used by devhub_kubectl.sh: the devhub must not spin while it waits."""
import os
import socket
import ssl
import sys
import time


def cpu_ticks(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def main():
    host, port, pid, secs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    sock = socket.create_connection((host, port), timeout=60)  # a hang guard, not a bound
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = ctx.wrap_bio(incoming, outgoing)
    try:
        tls.do_handshake()
    except ssl.SSLWantReadError:
        pass
    sock.sendall(outgoing.read())
    incoming.write(sock.recv(65536))  # the server's hello: it now waits for our next flight
    hz = float(os.sysconf("SC_CLK_TCK"))
    t0, c0 = time.monotonic(), cpu_ticks(pid)
    time.sleep(secs)
    t1, c1 = time.monotonic(), cpu_ticks(pid)
    sock.close()
    print("cpu=%.2f" % ((c1 - c0) / hz / (t1 - t0)))


if __name__ == "__main__":
    main()
