"""Serve ``ladder.wsgi`` on loopback for tests, port 0 and a port file like every server here.

    python tests/support/wsgi_server.py --listen 127.0.0.1:0 --port-file F

Threaded (a request per thread); stops on SIGTERM. It runs the WSGI application
exactly as a WSGI server does, with whatever settings its environment gives.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path
from socketserver import ThreadingMixIn
from wsgiref.simple_server import WSGIServer, make_server

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


class ThreadingWSGIServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--listen", default="127.0.0.1:0")
    p.add_argument("--port-file", type=Path, required=True)
    args = p.parse_args()
    from ladder.wsgi import application

    host, _, port = args.listen.rpartition(":")
    server = make_server(host, int(port), application, server_class=ThreadingWSGIServer)
    tmp = args.port_file.with_name(args.port_file.name + ".tmp")
    tmp.write_text(f"{server.server_address[1]}\n")
    tmp.replace(args.port_file)
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
    server.serve_forever()


if __name__ == "__main__":
    main()
