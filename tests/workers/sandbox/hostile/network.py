"""Reach anything over the network: the internet, loopback services, the engine, unix sockets."""

import socket

from probe import CONFIG, attempt, serve


def tcp(host, port):
    def go():
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        with socket.socket(family, socket.SOCK_STREAM) as s:
            s.settimeout(2)
            s.connect((host, port))
            return s.getpeername()

    return go


def unix(path):
    def go():
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(2)
            s.connect(path)
            return path

    return go


def udp_dns():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.settimeout(2)
        s.sendto(b"\x00" * 12, ("8.8.8.8", 53))
        return s.recvfrom(512)


for host, port in CONFIG["tcp"]:
    attempt(f"tcp {host}:{port}", tcp(host, port))
for path in CONFIG["unix"]:
    attempt(f"unix {path}", unix(path))
attempt("udp 8.8.8.8:53", udp_dns)
attempt("dns example.com", lambda: socket.getaddrinfo("example.com", 443))
serve()
