#!/usr/bin/python3
"""The smallest 'network' service Nova 26 accepts, for servers booted with networks='none'.

Nova still asks Neutron for its extension list (at live migration) and for ports/networks (at boot
and delete). Reads of a collection answer an empty list, anything else 404. Every request is appended
to LOGFILE, so a test can see what Nova asked.

Usage: neutron_stub.py PORT LOGFILE   (binds 127.0.0.1)
"""
import json
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT = int(sys.argv[1])
LOGFILE = sys.argv[2]


class StubHandler(BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'

    def log_message(self, fmt, *args):
        with open(LOGFILE, 'a', encoding='utf-8') as log:
            log.write(f'{time.strftime("%H:%M:%S")} {fmt % args}\n')

    def reply(self, status, payload):
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        segments = [s for s in self.path.split('?')[0].split('/') if s]
        if not segments:
            href = f'http://127.0.0.1:{PORT}/v2.0/'
            return self.reply(200, {'versions': [{'id': 'v2.0', 'status': 'CURRENT',
                                                  'links': [{'rel': 'self', 'href': href}]}]})
        if segments == ['v2.0']:
            return self.reply(200, {'resources': []})
        if len(segments) == 2 and segments[0] == 'v2.0':
            return self.reply(200, {segments[1].replace('-', '_'): []})
        return self.not_found()

    def not_found(self):
        length = int(self.headers.get('Content-Length') or 0)
        if length:
            self.rfile.read(length)
        self.reply(404, {'NeutronError': {'type': 'NotFound', 'message': 'not in the stub', 'detail': ''}})

    do_POST = do_PUT = do_DELETE = not_found


if __name__ == '__main__':
    ThreadingHTTPServer.daemon_threads = True
    ThreadingHTTPServer(('127.0.0.1', PORT), StubHandler).serve_forever()
