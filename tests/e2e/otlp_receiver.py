"""A loopback OTLP/HTTP receiver that decodes requests with the official opentelemetry-proto
definitions (PyPI) and prints each as one JSON line on stdout: the first line is
`{"port": N}`, then `{"signal": "logs"|"metrics", "headers": {...}, "resource": {...}, ...}`.
Runs until its stdin closes (tests/otlp.rs keeps it open).
"""

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)

lock = threading.Lock()


def emit(line):
    with lock:
        sys.stdout.write(json.dumps(line) + "\n")
        sys.stdout.flush()


def any_value(value):
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [any_value(v) for v in value.array_value.values]
    if kind == "kvlist_value":
        return attributes(value.kvlist_value.values)
    if kind == "bytes_value":
        return value.bytes_value.hex()
    return getattr(value, kind) if kind else None


def attributes(pairs):
    return {pair.key: any_value(pair.value) for pair in pairs}


def logs(body):
    request = ExportLogsServiceRequest()
    request.ParseFromString(body)
    for resource_logs in request.resource_logs:
        records = [
            {
                "body": any_value(record.body),
                "severity": record.severity_text,
                "time_unix_nano": record.time_unix_nano,
                "attributes": attributes(record.attributes),
            }
            for scope_logs in resource_logs.scope_logs
            for record in scope_logs.log_records
        ]
        yield {"resource": attributes(resource_logs.resource.attributes), "records": records}


def number(point):
    return point.as_int if point.WhichOneof("value") == "as_int" else point.as_double


def metrics(body):
    request = ExportMetricsServiceRequest()
    request.ParseFromString(body)
    for resource_metrics in request.resource_metrics:
        out = []
        for scope_metrics in resource_metrics.scope_metrics:
            for metric in scope_metrics.metrics:
                data = metric.WhichOneof("data")
                points = getattr(metric, data).data_points if data else []
                out.append(
                    {
                        "name": metric.name,
                        "type": data,
                        "points": [
                            {"attributes": attributes(p.attributes), "value": number(p)}
                            for p in points
                            if data in ("sum", "gauge")
                        ],
                    }
                )
        yield {"resource": attributes(resource_metrics.resource.attributes), "metrics": out}


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        headers = {k.lower(): v for k, v in self.headers.items()}
        if self.path == "/v1/logs":
            signal, decode, response = "logs", logs, ExportLogsServiceResponse()
        elif self.path == "/v1/metrics":
            signal, decode, response = "metrics", metrics, ExportMetricsServiceResponse()
        else:
            self.send_error(404)
            return
        for part in decode(body):
            emit({"signal": signal, "headers": headers, **part})
        payload = response.SerializeToString()
        self.send_response(200)
        self.send_header("content-type", "application/x-protobuf")
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    emit({"port": server.server_address[1]})
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sys.stdin.read()
    server.shutdown()


if __name__ == "__main__":
    main()
