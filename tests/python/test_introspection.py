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
