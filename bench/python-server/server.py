#!/usr/bin/env python3
"""A Python GraphQL server of the catalog contract, for bench/run.py's side-by-side comparison.

    python3 server.py --db CATALOG.sqlite --port 4001 [--host 127.0.0.1]

graphql-core 3.2 executes the repository's schema.graphql (build_schema, resolvers attached from
catalog.py); aiohttp serves it on one port at /graphql:
  - GraphQL over HTTP: POST with a JSON body {query, variables, operationName}, answered with
    application/json (200 for anything executed, 400 for a malformed request or a subscription);
  - graphql-transport-ws WebSockets (subprotocol `graphql-transport-ws`): connection_init/ack,
    ping/pong, subscribe/next/error/complete. Queries answer with one `next` and `complete`;
    documents that fail to parse or validate with `error`. With `--ws-protocol graphql-ws` it
    speaks the legacy subscriptions-transport-ws protocol instead (start/data/stop, a `ka` after
    connection_ack), and only it: a server of the other protocol for cg-load to be measured against.

Subscription.catalogVersion: one shared poller reads `PRAGMA data_version` every 25 ms on its own
connection; when another connection has committed it reads the version row and hands a changed
value to every subscriber (each keeps only the latest, so a slow one never queues).

Not served: catalogChanges (Query and Subscription, SYNC.md) answers with a GraphQL error
(extensions.code NOT_IMPLEMENTED) instead of change sets.

--processes N (default: the machine's cores, as the gateway has a worker per core) processes
share the port (SO_REUSEPORT; the kernel spreads connections over them), each with one thread:
resolvers run synchronously on its event loop, one operation at a time, each in its own read
transaction, and its own catalogVersion poller. The catalog is opened read-only, with the
gateway's page cache size (64 MiB per connection).
"""
import argparse
import asyncio
import ctypes
import json
import logging
import os
import signal
import sys
import weakref
from collections import OrderedDict

from aiohttp import WSMsgType, web
from graphql import (ExecutionResult, GraphQLError, OperationType, build_schema, execute_sync, get_operation_ast,
                     parse, subscribe, validate)

import catalog

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_SCHEMA = os.path.join(HERE, "..", "..", "schema.graphql")
PROTOCOL = "graphql-transport-ws"
POLL_SECONDS = 0.025
INIT_TIMEOUT_SECONDS = 10.0
DOCUMENT_CACHE_SIZE = 256

log = logging.getLogger("python-server")


def dumps(value):
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class VersionHub:
    """One poller of PRAGMA data_version for every catalogVersion subscriber."""

    def __init__(self, path):
        self.conn = catalog.open_read_only(path)
        self.subscribers = set()
        self.data_version = None
        self.task = None

    def current(self):
        return catalog.read_catalog_version(self.conn)

    async def poll(self):
        while True:
            await asyncio.sleep(POLL_SECONDS)
            try:
                data_version = self.conn.execute("PRAGMA data_version").fetchone()[0]
                if data_version == self.data_version:
                    continue
                self.data_version = data_version
                if self.subscribers:
                    version = self.current()
                    for s in list(self.subscribers):
                        s.offer(version)
            except Exception:  # noqa: BLE001 — a locked or vanished file is retried at the next tick
                log.exception("version poll failed")

    async def versions(self):
        """The current version at once, then each different one (the catalogVersion stream)."""
        s = Subscriber()
        self.subscribers.add(s)
        try:
            last = self.current()
            yield last
            while True:
                version = await s.next()
                if version != last:
                    last = version
                    yield version
        finally:
            self.subscribers.discard(s)


class Subscriber:
    """The latest version not yet taken by one subscription."""

    def __init__(self):
        self.value = None
        self.ready = asyncio.Event()

    def offer(self, value):
        self.value = value
        self.ready.set()

    async def next(self):
        await self.ready.wait()
        self.ready.clear()
        return self.value


class GraphQLService:
    """The schema with its resolvers, parsed-and-validated documents cached by their text."""

    def __init__(self, db, schema_path):
        with open(schema_path) as f:
            self.schema = build_schema(f.read())
        catalog.attach_resolvers(self.schema)
        subscription = self.schema.subscription_type.fields
        subscription["catalogVersion"].subscribe = lambda _, info: info.context.hub.versions()
        subscription["catalogVersion"].resolve = lambda version, _: version
        subscription["catalogChanges"].subscribe = catalog.not_served
        self.catalog = catalog.Catalog(db)
        self.hub = VersionHub(db)
        self.documents = OrderedDict()

    def prepare(self, query, operation_name):
        """(document, operation) or (None, errors) for a document that does not parse or validate."""
        cached = self.documents.get(query)
        if cached is None:
            try:
                document = parse(query)
                errors = validate(self.schema, document)
            except GraphQLError as e:
                document, errors = None, [e]
            cached = (None, errors) if errors else (document, None)
            self.documents[query] = cached
            if len(self.documents) > DOCUMENT_CACHE_SIZE:
                self.documents.popitem(last=False)
        else:
            self.documents.move_to_end(query)
        document, errors = cached
        if document is None:
            return None, errors
        operation = get_operation_ast(document, operation_name)
        if operation is None:
            return None, [GraphQLError("Unknown operation name" if operation_name else "Must provide operation name")]
        return document, operation

    def execute(self, document, variables, operation_name):
        with catalog.Request(self.catalog, self.hub) as req:
            return execute_sync(self.schema, document, context_value=req, variable_values=variables,
                                operation_name=operation_name)

    async def subscribe(self, document, variables, operation_name):
        req = catalog.Request(self.catalog, self.hub)
        return await subscribe(self.schema, document, context_value=req, variable_values=variables,
                               operation_name=operation_name)


def request_fields(payload):
    """query, variables, operationName of a GraphQL request object, or a message why not."""
    if not isinstance(payload, dict):
        return None, "the request must be a JSON object"
    query, variables, name = payload.get("query"), payload.get("variables"), payload.get("operationName")
    if not isinstance(query, str):
        return None, "query must be a string"
    if variables is not None and not isinstance(variables, dict):
        return None, "variables must be an object"
    if name is not None and not isinstance(name, str):
        return None, "operationName must be a string"
    return (query, variables, name), None


# ---- GraphQL over HTTP ----------------------------------------------------------------------

def json_response(body, status=200):
    return web.Response(text=dumps(body), status=status, content_type="application/json")


async def http_post(request):
    service = request.app["service"]
    try:
        payload = json.loads(await request.text())
    except ValueError:
        return json_response({"errors": [{"message": "the body is not JSON"}]}, 400)
    fields, problem = request_fields(payload)
    if problem:
        return json_response({"errors": [{"message": problem}]}, 400)
    query, variables, name = fields
    document, operation = service.prepare(query, name)
    if document is None:
        return json_response({"errors": [e.formatted for e in operation]})
    if operation.operation != OperationType.QUERY:
        return json_response({"errors": [{"message": "only queries are served over HTTP; subscribe over WebSocket"}]}, 400)
    return json_response(service.execute(document, variables, name).formatted)


# ---- graphql-transport-ws -------------------------------------------------------------------

class TransportSession:
    """One graphql-transport-ws connection: its state and its running subscriptions."""

    def __init__(self, ws, service):
        self.ws = ws
        self.service = service
        self.acknowledged = False
        self.init_received = False
        self.subscriptions = {}  # id -> asyncio.Task

    async def send(self, message):
        if not self.ws.closed:
            await self.ws.send_str(dumps(message))

    async def close(self, code, reason):
        await self.ws.close(code=code, message=reason.encode())

    async def run(self):
        timer = asyncio.get_running_loop().call_later(INIT_TIMEOUT_SECONDS, self.init_timeout)
        try:
            async for msg in self.ws:
                if msg.type != WSMsgType.TEXT:
                    await self.close(4400, "Only text messages are accepted")
                    break
                try:
                    message = json.loads(msg.data)
                    kind = message["type"]
                except (ValueError, KeyError, TypeError):
                    await self.close(4400, "Invalid message")
                    break
                await self.handle(kind, message)
        finally:
            timer.cancel()
            for task in self.subscriptions.values():
                task.cancel()

    def init_timeout(self):
        if not self.init_received:
            asyncio.ensure_future(self.close(4408, "Connection initialisation timeout"))

    async def handle(self, kind, message):
        if kind == "connection_init":
            if self.init_received:
                return await self.close(4429, "Too many initialisation requests")
            self.init_received = True
            self.acknowledged = True
            return await self.send({"type": "connection_ack"})
        if kind == "ping":
            pong = {"type": "pong"}
            if message.get("payload") is not None:
                pong["payload"] = message["payload"]
            return await self.send(pong)
        if kind == "pong":
            return
        if kind == "complete":
            task = self.subscriptions.pop(message.get("id"), None)
            if task is not None:
                task.cancel()
            return
        if kind == "subscribe":
            if not self.acknowledged:
                return await self.close(4401, "Unauthorized")
            sid = message.get("id")
            fields, problem = request_fields(message.get("payload"))
            if not isinstance(sid, str) or not sid or problem:
                return await self.close(4400, problem or "Invalid message: subscribe needs an id")
            if sid in self.subscriptions:
                return await self.close(4409, f"Subscriber for {sid} already exists")
            return await self.start(sid, *fields)
        await self.close(4400, f"Invalid message type {kind!r}")

    async def start(self, sid, query, variables, name):
        document, operation = self.service.prepare(query, name)
        if document is None:
            return await self.send({"id": sid, "type": "error", "payload": [e.formatted for e in operation]})
        if operation.operation != OperationType.SUBSCRIPTION:
            result = self.service.execute(document, variables, name)
            await self.send({"id": sid, "type": "next", "payload": result.formatted})
            return await self.send({"id": sid, "type": "complete"})
        self.subscriptions[sid] = asyncio.ensure_future(self.stream(sid, document, variables, name))

    async def stream(self, sid, document, variables, name):
        try:
            results = await self.service.subscribe(document, variables, name)
            if isinstance(results, ExecutionResult):
                await self.send({"id": sid, "type": "next", "payload": results.formatted})
            else:
                try:
                    async for result in results:
                        await self.send({"id": sid, "type": "next", "payload": result.formatted})
                finally:
                    await results.aclose()
            if self.subscriptions.pop(sid, None) is not None:
                await self.send({"id": sid, "type": "complete"})
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001 — a broken stream ends this subscription, not the connection
            log.exception("subscription %s failed", sid)
            if self.subscriptions.pop(sid, None) is not None:
                await self.send({"id": sid, "type": "error", "payload": [{"message": "internal error"}]})


LEGACY_PROTOCOL = "graphql-ws"


class LegacySession(TransportSession):
    """One legacy graphql-ws (subscriptions-transport-ws) connection: the same operations under
    that protocol's names — start/stop for subscribe/complete from the client, data for next —
    a `ka` after connection_ack, connection_terminate to end it."""

    RENAMED_IN = {"start": "subscribe", "stop": "complete"}

    async def send(self, message):
        if message.get("type") == "next":
            message = {**message, "type": "data"}
        elif message.get("type") == "error" and isinstance(message.get("payload"), list):
            payload = message["payload"]
            message = {**message, "payload": payload[0] if len(payload) == 1 else {"errors": payload}}
        await super().send(message)

    async def handle(self, kind, message):
        if kind == "connection_terminate":
            return await self.close(1000, "")
        if kind in ("subscribe", "ping", "pong", "complete"):
            return await self.close(4400, f"Invalid message type {kind!r} on {LEGACY_PROTOCOL}")
        await super().handle(self.RENAMED_IN.get(kind, kind), message)
        if kind == "connection_init" and self.acknowledged:
            await self.send({"type": "ka"})


async def graphql_get(request):
    protocol = request.app["ws_protocol"]
    ws = web.WebSocketResponse(protocols=(protocol,), autoping=True)
    if not ws.can_prepare(request).ok:
        return json_response({"errors": [{"message": "GET /graphql serves WebSocket upgrades only"}]}, 400)
    await ws.prepare(request)
    if ws.ws_protocol != protocol:
        await ws.close(code=4406, message=b"Subprotocol not acceptable")
        return ws
    request.app["websockets"].add(ws)
    session = LegacySession if protocol == LEGACY_PROTOCOL else TransportSession
    await session(ws, request.app["service"]).run()
    return ws


# ---- start-up -------------------------------------------------------------------------------

def make_app(service, ws_protocol=PROTOCOL):
    app = web.Application()
    app["service"] = service
    app["ws_protocol"] = ws_protocol
    app["websockets"] = weakref.WeakSet()
    app.router.add_post("/graphql", http_post)
    app.router.add_get("/graphql", graphql_get)

    async def start_poller(app):
        service.hub.task = asyncio.ensure_future(service.hub.poll())

    async def stop_poller(app):
        service.hub.task.cancel()

    async def close_websockets(app):
        # SIGTERM: open WebSockets are told the server is going away instead of holding the exit.
        await asyncio.gather(*(ws.close(code=1001, message=b"Server shutdown") for ws in set(app["websockets"])))

    app.on_startup.append(start_poller)
    app.on_shutdown.append(close_websockets)
    app.on_cleanup.append(stop_poller)
    return app


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", required=True, help="catalog SQLite file (opened read-only)")
    ap.add_argument("--port", type=int, default=4001)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--schema", default=DEFAULT_SCHEMA, help="schema.graphql (default: the repository's)")
    ap.add_argument("--processes", type=int, default=os.cpu_count() or 1,
                    help="server processes sharing the port (default: the machine's cores)")
    ap.add_argument("--ws-protocol", choices=(PROTOCOL, LEGACY_PROTOCOL), default=PROTOCOL,
                    help=f"the WebSocket subprotocol served (default {PROTOCOL}; {LEGACY_PROTOCOL}: the legacy "
                         "subscriptions-transport-ws protocol, alone)")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(asctime)s %(name)s %(message)s")
    if not os.path.exists(args.db):
        raise SystemExit(f"no catalog at {args.db}")
    if args.processes < 1:
        raise SystemExit("--processes must be at least 1")
    children = []
    for _ in range(args.processes - 1):
        pid = os.fork()
        if pid == 0:
            # A child ends with its parent, however the parent ends (PR_SET_PDEATHSIG).
            ctypes.CDLL(None).prctl(1, signal.SIGTERM)
            serve(args)
            os._exit(0)
        children.append(pid)
    try:
        print(f"python-server listening on ws://{args.host}:{args.port}/graphql and http://{args.host}:{args.port}/graphql "
              f"(catalog: {args.db}, {args.processes} processes)", flush=True)
        serve(args)
    finally:
        for pid in children:
            try:
                os.kill(pid, signal.SIGTERM)
                os.waitpid(pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass


def serve(args):
    """One process's server (its own connections, opened after the fork)."""
    service = GraphQLService(args.db, args.schema)
    web.run_app(make_app(service, args.ws_protocol), host=args.host, port=args.port, access_log=None, print=None,
                handle_signals=True, reuse_port=True)


if __name__ == "__main__":
    main()
