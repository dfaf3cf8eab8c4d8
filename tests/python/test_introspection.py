"""Introspection round trip: graphql-core rebuilds our schema from the introspection result,
and it equals the contract's schema (types, fields, arguments, defaults)."""
import json
import subprocess

from graphql import (build_client_schema, build_schema, get_introspection_query,
                     lexicographic_sort_schema, print_schema)
from graphql.language import parse, print_ast
from conftest import CONTRACT


def run_query(binary, db, query):
    p = subprocess.run([binary, "query", "--db", db, "-"], input=query.encode(), capture_output=True)
    assert p.returncode == 0, p.stdout + p.stderr
    return json.loads(p.stdout)


def without_descriptions(sdl):
    doc = parse(sdl, no_location=True)

    def strip(node):
        if hasattr(node, "description"):
            node.description = None
        for key in getattr(node, "keys", ()):
            value = getattr(node, key, None)
            if isinstance(value, (list, tuple)):
                for v in value:
                    if hasattr(v, "keys"):
                        strip(v)
            elif hasattr(value, "keys"):
                strip(value)

    strip(doc)
    return print_ast(doc)


def test_build_client_schema_round_trip(binary, demo_db):
    result = run_query(binary, demo_db, get_introspection_query(descriptions=True, specified_by_url=True,
                                                                directive_is_repeatable=True,
                                                                schema_description=True,
                                                                input_value_deprecation=True))
    assert "errors" not in result
    client = build_client_schema(result["data"])
    contract = build_schema((CONTRACT / "schema.graphql").read_text() + "\n" + (CONTRACT / "sync.graphql").read_text())
    ours = without_descriptions(print_schema(lexicographic_sort_schema(client)))
    theirs = without_descriptions(print_schema(lexicographic_sort_schema(contract)))
    assert ours == theirs


def test_graphiql_standard_introspection_query(binary, demo_db):
    result = run_query(binary, demo_db, get_introspection_query())
    assert "errors" not in result
    names = {t["name"] for t in result["data"]["__schema"]["types"]}
    assert {"Query", "Subscription", "Product", "__Schema", "__Type", "String", "ID"} <= names
    assert result["data"]["__schema"]["subscriptionType"] == {"name": "Subscription"}


def test_is_one_of_is_introspected(binary, demo_db):
    """graphql-js 16.9+ (`getIntrospectionQuery({ oneOf: true })`) and graphql-core 3.3 ask every
    type for `isOneOf`; the field was unknown, which failed the whole schema fetch. No input type
    of this schema is a OneOf input object."""
    result = run_query(binary, demo_db, '{ __type(name: "ProductFilter") { isOneOf } q: __type(name: "Query") { isOneOf }'
                                        ' __schema { types { name isOneOf } } }')
    assert "errors" not in result, result
    assert result["data"]["__type"] == {"isOneOf": False}
    assert result["data"]["q"] == {"isOneOf": None}
    assert all(t["isOneOf"] is (False if t["name"] == "ProductFilter" else None) for t in result["data"]["__schema"]["types"]
               if t["name"] in ("ProductFilter", "Product", "String", "__TypeKind"))
