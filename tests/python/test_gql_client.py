"""Interop with a real third-party client: Python's gql over graphql-ws (legacy), over
graphql-transport-ws, and over HTTP (aiohttp)."""
import asyncio

import pytest
from gql import Client, gql
from gql.transport.aiohttp import AIOHTTPTransport
from gql.transport.exceptions import TransportQueryError
from gql.transport.websockets import WebsocketsTransport

from gateway_server import catalog, gateway, sqlite3  # noqa: F401 (fixtures)

VERSION = gql("{ catalogVersion { version catalogRow assetRow } }")
SUBSCRIPTION = gql("subscription { catalogVersion { version } }")


def ws_transport(url, subprotocol):
    return WebsocketsTransport(url=url, subprotocols=[subprotocol])


@pytest.mark.parametrize("subprotocol", [WebsocketsTransport.APOLLO_SUBPROTOCOL, WebsocketsTransport.GRAPHQLWS_SUBPROTOCOL])
def test_websocket_query(gateway, subprotocol):
    async def run():
        async with Client(transport=ws_transport(gateway.ws_url, subprotocol)) as session:
            return await session.execute(VERSION)
    assert asyncio.run(run()) == {"catalogVersion": {"version": 1, "catalogRow": 10, "assetRow": 20}}


@pytest.mark.parametrize("subprotocol", [WebsocketsTransport.APOLLO_SUBPROTOCOL, WebsocketsTransport.GRAPHQLWS_SUBPROTOCOL])
def test_websocket_query_error(gateway, subprotocol):
    async def run():
        async with Client(transport=ws_transport(gateway.ws_url, subprotocol)) as session:
            await session.execute(gql("{ nope }"))
    with pytest.raises(TransportQueryError):
        asyncio.run(run())


@pytest.mark.parametrize("subprotocol", [WebsocketsTransport.APOLLO_SUBPROTOCOL, WebsocketsTransport.GRAPHQLWS_SUBPROTOCOL])
def test_websocket_subscription_sees_sqlite3_write(gateway, subprotocol):
    async def run():
        seen = []
        async with Client(transport=ws_transport(gateway.ws_url, subprotocol)) as session:
            async for result in session.subscribe(SUBSCRIPTION):
                seen.append(result["catalogVersion"]["version"])
                if len(seen) == 1:
                    await asyncio.to_thread(sqlite3, gateway.db, "INSERT INTO version VALUES (2, 11, 21);")
                else:
                    break
        return seen
    assert asyncio.run(asyncio.wait_for(run(), 10)) == [1, 2]


def test_websocket_with_schema_from_introspection(gateway):
    async def run():
        transport = ws_transport(gateway.ws_url, WebsocketsTransport.GRAPHQLWS_SUBPROTOCOL)
        async with Client(transport=transport, fetch_schema_from_transport=True) as session:
            return await session.execute(VERSION)
    assert asyncio.run(run())["catalogVersion"]["version"] == 1


def test_http_aiohttp_transport(gateway):
    async def run():
        async with Client(transport=AIOHTTPTransport(url=gateway.http_url), fetch_schema_from_transport=True) as session:
            return await session.execute(VERSION)
    assert asyncio.run(run()) == {"catalogVersion": {"version": 1, "catalogRow": 10, "assetRow": 20}}


def test_http_aiohttp_error(gateway):
    async def run():
        async with Client(transport=AIOHTTPTransport(url=gateway.http_url)) as session:
            await session.execute(gql("{ nope }"))
    with pytest.raises(TransportQueryError):
        asyncio.run(run())
