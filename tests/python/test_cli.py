"""The command-line tool as a user meets it: exit statuses, messages naming the file, stdin."""
import json
import re
import os
import socket
import sqlite3
import subprocess

import pytest

from gateway_server import make_catalog


def run(binary, *args, stdin=None):
    p = subprocess.run([binary, *args], input=stdin, capture_output=True)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def test_query_success_is_exit_0(binary, demo_db):
    code, out, _ = run(binary, "query", "--db", demo_db, "{ catalogVersion { version } }")
    assert code == 0
    assert json.loads(out) == {"data": {"catalogVersion": {"version": 6}}}


def test_query_from_stdin_with_variables_and_operation(binary, demo_db):
    doc = b"query A { alphabet { letter } } query B($id: ID!) { category(id: $id) { id } }"
    code, out, _ = run(binary, "query", "--db", demo_db, "--operation", "B", "--variables", '{"id": 1}', "-", stdin=doc)
    assert code == 0
    assert json.loads(out) == {"data": {"category": {"id": "1"}}}


def test_graphql_errors_are_exit_1(binary, demo_db):
    code, out, _ = run(binary, "query", "--db", demo_db, "{ nope }")
    assert code == 1
    assert json.loads(out)["errors"][0]["message"] == 'Cannot query field "nope" on type "Query".'
    code, out, _ = run(binary, "query", "--db", demo_db, "{ products(first: 500) { totalCount } }")
    assert code == 1
    assert json.loads(out)["data"] is None


def test_missing_file_is_exit_2_naming_it(binary, tmp_path):
    missing = str(tmp_path / "nope.sqlite")
    code, out, err = run(binary, "query", "--db", missing, "{ categories { id } }")
    assert code == 2 and out == ""
    assert err.strip() == f"catalog-gateway: {missing}: no such file"


def test_not_a_catalog_is_exit_2_naming_what_is_missing(binary, tmp_path):
    path = tmp_path / "other.sqlite"
    with sqlite3.connect(path) as c:
        c.execute("CREATE TABLE t(x)")
    code, _, err = run(binary, "query", "--db", str(path), "{ categories { id } }")
    assert code == 2
    assert err.strip() == f"catalog-gateway: {path}: not a Radiant catalog: table hierarchy is missing"
    text = tmp_path / "text.sqlite"
    text.write_text("hello, not a database\n" * 100)
    code, _, err = run(binary, "query", "--db", str(text), "{ categories { id } }")
    assert code == 2
    assert str(text) in err and "not an SQLite database" in err


def test_a_directory_is_exit_2_saying_so(binary, tmp_path):
    # SQLite opens a directory read-only and fails at the first read, as "disk I/O error".
    d = str(tmp_path)
    for args in (["query", "--db", d, "{ categories { id } }"], ["prepare", "--db", d], ["bump-version", "--db", d],
                 ["serve", "--db", d, "--port", "0"]):
        p = subprocess.run([binary, *args], capture_output=True, timeout=30)
        err = p.stderr.decode()
        assert p.returncode == 2 and f"{d}: " in err and "is a directory, not an SQLite file" in err, (args, err)
        assert p.stdout == b"", (args, p.stdout)
        # No warning about the gateway's indexes for a file that is no catalog at all.
        assert "catalog_not_prepared" not in err, (args, err)


def test_serve_on_a_file_that_is_not_a_catalog_says_only_that(binary, tmp_path):
    text = tmp_path / "text.sqlite"
    text.write_text("hello, not a database\n" * 100)
    p = subprocess.run([binary, "serve", "--db", str(text), "--port", "0"], capture_output=True, timeout=30)
    err = p.stderr.decode()
    assert p.returncode == 2 and err.strip() == f"catalog-gateway: {text}: not an SQLite database", err


def test_a_locked_catalog_says_whose_lock_not_that_the_file_is_bad(binary, tmp_path, demo_db):
    # `prepare` said "not a SQLite catalog: database is locked"; every command now says the
    # lock is another process's, held past the busy timeout (5 s: the commands run side by side).
    import shutil
    path = str(tmp_path / "locked.sqlite")
    shutil.copyfile(demo_db, path)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        commands = (["prepare", "--db", path], ["bump-version", "--db", path], ["query", "--db", path, "{ catalogVersion { version } }"])
        running = [subprocess.Popen([binary, *c], stdout=subprocess.PIPE, stderr=subprocess.PIPE) for c in commands]
        for c, p in zip(commands, running):
            out, err = p.communicate(timeout=60)
            err = err.decode()
            assert p.returncode == 2, (c[0], err)
            assert err.strip() == f"catalog-gateway: {path}: database is locked (another process held its lock longer than the busy timeout)", (c[0], err)
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_bad_variables_json_is_exit_2(binary, demo_db):
    code, _, err = run(binary, "query", "--db", demo_db, "--variables", "{oops", "{ categories { id } }")
    assert code == 2
    assert err.startswith("catalog-gateway: --variables: invalid JSON at line 1")


@pytest.mark.parametrize("variables", ["[1]", "5", '"x"'])
def test_variables_that_are_not_an_object_are_exit_2(binary, demo_db, variables):
    code, out, err = run(binary, "query", "--db", demo_db, "--variables", variables, "{ categories { id } }")
    assert (code, out) == (2, "")
    assert err.startswith("catalog-gateway: --variables: not a JSON object")


def test_a_document_that_cannot_be_read_from_stdin_is_exit_2(binary, demo_db, tmp_path):
    directory = os.open(tmp_path, os.O_RDONLY)  # read() of a directory fails with EISDIR
    try:
        p = subprocess.run([binary, "query", "--db", demo_db, "-"], stdin=directory, capture_output=True)
    finally:
        os.close(directory)
    assert p.returncode == 2
    assert p.stderr.decode() == "catalog-gateway: cannot read the document from standard input: Is a directory\n"


@pytest.mark.parametrize("args", [
    ["query", "--db", "{db}", "{ categories { id } }"],
    ["prepare", "--db", "{copy}"],
    ["query", "--help"],
    ["--version"],
])
def test_output_that_cannot_be_written_is_exit_2(binary, demo_db, tmp_path, args):
    # A full disk (/dev/full) must not pass for success with the answer lost.
    copy = tmp_path / "copy.sqlite"
    copy.write_bytes(open(demo_db, "rb").read())
    argv = [a.replace("{db}", demo_db).replace("{copy}", str(copy)) for a in args]
    with open("/dev/full", "wb") as full:
        p = subprocess.run([binary, *argv], stdout=full, stderr=subprocess.PIPE)
    assert p.returncode == 2
    assert p.stderr.decode().endswith("catalog-gateway: cannot write to standard output: No space left on device\n")


def test_output_to_a_closed_pipe_is_exit_2(binary, demo_db):
    # `query … | head -c 10`: the reader is gone before the answer is written. It used to die
    # by SIGPIPE (status 141, no message), against README's "a closed pipe … exit 2".
    r, w = os.pipe()
    os.close(r)
    try:
        p = subprocess.run([binary, "query", "--db", demo_db, "{ products(first: 100) { nodes { id name description } } }"],
                           stdout=w, stderr=subprocess.PIPE)  # subprocess restores SIGPIPE's default
    finally:
        os.close(w)
    assert p.returncode == 2
    assert p.stderr.decode().endswith("catalog-gateway: cannot write to standard output: Broken pipe\n")


def test_serve_on_a_port_in_use_leaves_the_catalog_untouched(binary, tmp_path):
    # The address is checked before `prepare` writes the gateway's cg_ objects.
    db = make_catalog(tmp_path)
    before = open(db, "rb").read()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, out, err = run(binary, "serve", "--db", db, "--port", str(port))
    assert (code, out) == (2, "")
    assert err == f"catalog-gateway: could not listen on 127.0.0.1:{port}: Address already in use\n"
    assert open(db, "rb").read() == before


def test_bench_rows_of_a_category_that_does_not_exist_is_exit_2(binary, demo_db):
    code, out, err = run(binary, "bench-rows", "--db", demo_db, "--category", "999999", "--iterations", "3")
    assert (code, out) == (2, "")
    assert err == f"catalog-gateway: {demo_db}: --category 999999: no such category (hierarchy has no row with that id)\n"


def test_version_names_the_gateway_and_the_libraries_it_runs_with(binary):
    code, out, err = run(binary, "--version")
    assert (code, err) == (0, "")
    # The SQLite shared library Python loads is the one the gateway loads (Debian's).
    assert re.fullmatch(rf"catalog-gateway \d+\.\d+\.\d+ \(SQLite {re.escape(sqlite3.sqlite_version)}, "
                        r"libwebsockets \d+\.\d+\.\d+[^,-]*, jansson \d+\.\d+(\.\d+)?\)\n", out), out


def test_demo_db_over_an_existing_file_names_it_first(binary, tmp_path):
    out = tmp_path / "d.sqlite"
    out.write_bytes(b"keep")
    code, stdout, err = run(binary, "demo-db", "--out", str(out))
    assert (code, stdout) == (2, "")
    assert err == f"catalog-gateway: {out}: already exists; pass --force to replace it\n"
    assert out.read_bytes() == b"keep"


def test_usage_errors_are_exit_2(binary):
    code, _, err = run(binary, "query")
    assert code == 2
    assert "--db" in err


def test_query_never_writes_the_file(binary, demo_db):
    before = open(demo_db, "rb").read()
    run(binary, "query", "--db", demo_db, "{ products(first: 3) { nodes { id kit { id } specs { key } } } }")
    assert open(demo_db, "rb").read() == before


def test_serve_flag_out_of_range_names_the_flag(binary, demo_db):
    for flag, value in (("--page-cache-mb", "0"), ("--page-cache-mb", "70000"), ("--answer-cache-mb", "2000000")):
        p = subprocess.run([binary, "serve", "--db", demo_db, "--port", "0", flag, value],
                           capture_output=True, timeout=30)
        err = p.stderr.decode()
        assert p.returncode == 2 and f"{flag} must be between" in err, (flag, value, err)


def test_negative_numbers_get_the_range_not_missing_value(binary, demo_db):
    # `--port -1` (a space, not `=`) used to be "Missing value for '--port <port>'": the parser took
    # -1 for a flag.
    for command, flag, value, says in ((["serve", "--db", demo_db], "--port", "-1", "--port must be between 0 and 65535"),
                                       (["serve", "--db", demo_db], "--workers", "-3", "--workers must be between 1 and 1024 (got -3)"),
                                       (["serve", "--db", demo_db], "--max-body-bytes", "-1", "--max-body-bytes must be at least 1"),
                                       (["serve", "--db", demo_db], "--max-total-queued-bytes", "0", "--max-total-queued-bytes must be at least 1"),
                                       (["bump-version", "--db", demo_db], "--catalog-row", "-5",
                                        "--catalog-row must be between 0 and 2147483647 (got -5)"),
                                       (["serve", "--db", demo_db], "--max-workers-per-connection", "0",
                                        "--max-workers-per-connection must be between 1 and 1024 (got 0)"),
                                       (["query", "--db", demo_db, "{ __typename }"], "--max-depth", "-1",
                                        "--max-depth must be at least 1 (got -1)"),
                                       (["demo-db", "--out", "/nonexistent/d.sqlite"], "--seed", "-1",
                                        "The value '-1' is invalid for '--seed <s>'")):
        code, out, err = run(binary, *command, flag, value)
        assert code == 2 and says in err and out == "", (flag, value, err)


def test_byte_limits_past_1_tib_are_refused(binary, demo_db):
    # --max-body-bytes 2^63 - 1 was taken, and the first early HTTP answer (a 415 before the
    # body was read) multiplied it by 4 and crashed the server.
    for flag in ("--max-message-bytes", "--max-body-bytes", "--max-queued-bytes", "--max-total-queued-bytes"):
        code, out, err = run(binary, "serve", "--db", demo_db, flag, str((1 << 63) - 1))
        assert code == 2 and f"{flag} must be at most 1099511627776 (1 TiB; got 9223372036854775807)" in err and out == "", (flag, err)
    # The engine's byte limits too (query and serve share them), and the busy timeout, which
    # SQLite takes as a 32-bit int: 2^63 - 1 was cut to 24.8 days without a word.
    for command in (["query", "--db", demo_db, "{ catalogVersion { version } }"], ["serve", "--db", demo_db]):
        for flag, low in (("--max-document-bytes", 1), ("--max-response-bytes", 1024)):
            code, out, err = run(binary, *command, flag, str((1 << 63) - 1))
            assert code == 2 and out == "", (command, flag, err)
            assert f"{flag} must be between {low} and 1099511627776 (1 TiB; got 9223372036854775807)" in err, err
    code, out, err = run(binary, "serve", "--db", demo_db, "--busy-timeout-ms", str((1 << 63) - 1))
    assert code == 2 and "--busy-timeout-ms must be between 1 and 2147483647 (got 9223372036854775807)" in err, err


def test_a_usage_error_writes_nothing(binary, tmp_path):
    # serve without --db creates demo/catalog.sqlite; a usage error must stop it before that.
    p = subprocess.run([os.path.abspath(binary), "serve", "--port", "0", "--fixed-response", str(tmp_path / "none")],
                       capture_output=True, timeout=30, cwd=tmp_path)
    assert p.returncode == 2 and "cannot read --fixed-response" in p.stderr.decode()
    assert sorted(x.name for x in tmp_path.iterdir()) == []


def test_serve_seconds_must_be_finite_and_at_most_a_day(binary, demo_db):
    # NaN and infinity used to pass validation and trap where they became milliseconds
    # (--init-timeout=inf crashed at start; --shutdown-timeout=nan would have at SIGTERM).
    for flag, value, says in (("--init-timeout", "inf", "more than 0 and at most 86400 seconds (got inf)"),
                              ("--init-timeout", "nan", "more than 0 and at most 86400 seconds (got nan)"),
                              ("--init-timeout", "0", "(got 0)"),
                              ("--shutdown-timeout", "nan", "between 0 and 86400 seconds (got nan)"),
                              ("--shutdown-timeout", "-1", "between 0 and 86400 seconds (got -1)"),
                              ("--compaction-interval", "inf", "(got inf)"),
                              ("--keepalive", "0", "(got 0)"),
                              ("--keepalive-timeout", "100000000000", "(got 100000000000)"),
                              ("--send-timeout", "nan", "between 0 and 86400 seconds (got nan)"),
                              ("--send-timeout", "-1", "between 0 and 86400 seconds (got -1)")):
        p = subprocess.run([binary, "serve", "--db", demo_db, "--port", "0", f"{flag}={value}"],
                           capture_output=True, timeout=30)
        err = p.stderr.decode()
        assert p.returncode == 2 and f"{flag} must be " in err and says in err, (flag, value, err)
        assert p.stdout == b"", (flag, value, p.stdout)


def test_serve_limits_that_would_overflow_are_refused(binary, demo_db):
    # The first two crashed the server (an arithmetic overflow trap) before they were bounded;
    # 20,000 workers left it opening SQLite connections for minutes, with no ready line.
    for flag, says in (("--max-connections", "between 1 and 10000000"), ("--poll-interval-ms", "between 1 and 60000"),
                       ("--workers", "between 1 and 1024")):
        p = subprocess.run([binary, "serve", "--db", demo_db, "--port", "0", f"{flag}=9223372036854775807"],
                           capture_output=True, timeout=30)
        err = p.stderr.decode()
        assert p.returncode == 2 and f"{flag} must be {says} (got 9223372036854775807)" in err, (flag, err)


def test_engine_limits_below_their_minimum_are_usage_errors(binary, demo_db):
    for command in (["query", "--db", demo_db, "{ alphabet { letter } }"], ["serve", "--db", demo_db, "--port", "0"]):
        for flag, value, says in (("--max-depth", "0", "at least 1 (got 0)"), ("--max-document-bytes", "0", "between 1 and 1099511627776 (1 TiB; got 0)"),
                                  ("--max-nodes", "-1", "at least 0 (got -1)"),
                                  ("--max-response-bytes", "1000", "between 1024 and 1099511627776 (1 TiB; got 1000)"),
                                  ("--max-execution-ms", "-1", "between 0 and 86400000 (got -1)")):
            p = subprocess.run([binary, *command, f"{flag}={value}"], capture_output=True, timeout=30)
            err = p.stderr.decode()
            assert p.returncode == 2 and f"{flag} must be {says}" in err, (command[0], flag, err)


def test_query_takes_the_answer_and_execution_limits(binary, demo_db):
    page = "{ products(first: 100) { nodes { id name description } } }"
    code, out, _ = run(binary, "query", "--db", demo_db, "--max-response-bytes", "1024", page)
    assert code == 1
    errors = json.loads(out)["errors"]
    assert [e["extensions"]["code"] for e in errors] == ["RESPONSE_TOO_LARGE"]
    code, out, _ = run(binary, "query", "--db", demo_db, "--max-response-bytes", "1048576", "--max-execution-ms", "0", page)
    assert code == 0
    assert len(json.loads(out)["data"]["products"]["nodes"]) == 100


def test_serve_host_must_be_an_address_of_this_machine(binary, demo_db):
    # Not an address literal: a usage error naming the flag.
    for host in ("nosuchhost.invalid", "", "eth0"):
        p = subprocess.run([binary, "serve", "--db", demo_db, "--port", "0", "--host", host],
                           capture_output=True, timeout=30)
        err = p.stderr.decode()
        assert p.returncode == 2 and "--host must be an IPv4 or IPv6 address literal" in err, (host, err)
        assert p.stdout == b"", (host, p.stdout)
    # An address no interface of this machine has (TEST-NET-1): lws alone would wait for it to
    # appear and listen nowhere; the gateway says so and exits, before any ready line.
    p = subprocess.run([binary, "serve", "--db", demo_db, "--port", "0", "--host", "192.0.2.1"],
                       capture_output=True, timeout=30)
    err = p.stderr.decode()
    assert p.returncode == 2, err
    assert "could not listen on 192.0.2.1:0: Cannot assign requested address" in err, err
    assert p.stdout == b"", p.stdout
    # A port another socket listens on: the same, with that reason.
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        p = subprocess.run([binary, "serve", "--db", demo_db, "--port", str(port)], capture_output=True, timeout=30)
    err = p.stderr.decode()
    assert p.returncode == 2 and f"could not listen on 127.0.0.1:{port}: Address already in use" in err, err
    assert p.stdout == b"", p.stdout


def test_bench_commands_json_describe_the_same_page(binary, demo_db):
    """bench/run.py reads bench-rows' and bench-query's --json: the engine's page is the one the
    row floor steps (same category, answer of the size the engine serves), and both report timings."""
    code, out, _ = run(binary, "bench-rows", "--db", demo_db, "--json", "--iterations", "3")
    assert code == 0
    rows = json.loads(out)
    code, out, _ = run(binary, "bench-query", "--db", demo_db, "--json", "--iterations", "3",
                       "--variables", json.dumps({"id": rows["category"]}))
    assert code == 0
    engine = json.loads(out)
    assert engine["iterations"] == 3 and engine["warm"] is False
    code, answer, _ = run(binary, "query", "--db", demo_db, "--variables", json.dumps({"id": rows["category"]}),
                          "query($id: ID!) { category(id: $id) { products(first: 50) { nodes { id } } } }")
    assert code == 0
    assert len(json.loads(answer)["data"]["category"]["products"]["nodes"]) == rows["products"]
    for r in (rows, engine):
        assert 0 < r["min_ms"] <= r["median_ms"] <= r["p99_ms"]
    assert engine["bytes"] > rows["bytes"]  # the JSON answer carries every text the floor copies, and more
    for command in ("bench-rows", "bench-query"):
        code, _, err = run(binary, command, "--db", demo_db, "--iterations", "0")
        assert code == 2 and "--iterations must be at least 1" in err, (command, err)


def test_bench_query_takes_an_execution_limit(binary, demo_db):
    """bench/tools/instructions.py runs bench-query under callgrind with --max-execution-ms 0:
    there the first 1M execution (the whole hierarchy read) outran the default 5 s and the count
    stopped with EXECUTION_TIMEOUT. The option is query's: 0 is no limit, the range is checked."""
    code, out, err = run(binary, "bench-query", "--db", demo_db, "--json", "--iterations", "2", "--max-execution-ms", "0")
    assert code == 0, err
    assert json.loads(out)["iterations"] == 2
    for bad in ("-1", "86400001"):
        code, _, err = run(binary, "bench-query", "--db", demo_db, "--iterations", "1", "--max-execution-ms", bad)
        assert code == 2 and f"--max-execution-ms must be between 0 and 86400000 (got {bad})" in err, err


def test_cg_load_refuses_counts_and_durations_that_measure_nothing(binary):
    # Before, --duration=inf ran forever and NaN, 0 connections or negative gaps ran and
    # reported nothing; each is now a usage error naming the flag (no server needed).
    import os
    cg_load = os.path.join(os.path.dirname(binary), "cg-load")
    url = "ws://127.0.0.1:1/graphql"
    for args, says in ((["ops", "--query", "{ __typename }", "--connections", "0"], "--connections must be at least 1 (got 0)"),
                       (["ops", "--query", "{ __typename }", "--duration=inf"], "--duration must be more than 0 and at most 86400 (got inf)"),
                       (["ops", "--query", "{ __typename }", "--warmup=nan"], "--warmup must be between 0 and 86400 (got nan)"),
                       (["fanout", "--db", "x.sqlite", "--gap-ms=-5"], "--gap-ms must be at least 0 (got -5)"),
                       (["idle", "--settle=-1"], "--settle must be between 0 and 86400 (got -1.0)"),
                       # A negative number after a space, not `=`: it was "Missing value".
                       (["fanout", "--db", "x.sqlite", "--gap-ms", "-5"], "--gap-ms must be at least 0 (got -5)"),
                       (["ops", "--query", "{ __typename }", "--connections", "-2"], "--connections must be at least 1 (got -2)")):
        p = subprocess.run([cg_load, *args, "--url", url], capture_output=True, timeout=30)
        err = p.stderr.decode()
        assert p.returncode == 64 and says in err, (args, p.returncode, err)


def test_idle_http_cost_usage_errors_name_the_argument(binary, demo_db):
    """bench/tools/idle_http_cost.py read sys.argv by hand: `--against` as the last word was an
    IndexError traceback, a missing BIN-DIR an IndexError too. Each is now a usage error (exit
    2) that names what is wrong, before any server starts."""
    import os
    import sys
    tool = os.path.join(os.path.dirname(__file__), "..", "..", "bench", "tools", "idle_http_cost.py")
    bin_dir = os.path.dirname(binary)
    for args, says in (([bin_dir, demo_db, "--against"], "argument --against: expected one argument"),
                       ([], "the following arguments are required: BIN-DIR, CATALOG"),
                       (["/nonexistent-dir", demo_db], "/nonexistent-dir/catalog-gateway: no such executable"),
                       ([bin_dir, "/nonexistent.sqlite"], "/nonexistent.sqlite: no such catalog file"),
                       ([bin_dir, demo_db, "--against", "/nonexistent-build"], "--against /nonexistent-build: no such executable"),
                       ([bin_dir, demo_db, "10", "0"], "ROUNDS must be at least 1")):
        p = subprocess.run([sys.executable, tool, *args], capture_output=True, timeout=30)
        err = p.stderr.decode()
        assert p.returncode == 2 and says in err and "Traceback" not in err, (args, p.returncode, err)


def test_close_cost_usage_errors_name_the_argument(binary, demo_db):
    """bench/tools/close_cost.py read sys.argv by hand, so run as README.md showed it (no
    arguments) its last word was an IndexError traceback. Each mistake is now a usage error
    (exit 2) that names what is wrong, before any server starts."""
    import os
    import sys
    tool = os.path.join(os.path.dirname(__file__), "..", "..", "bench", "tools", "close_cost.py")
    for args, says in (([], "the following arguments are required: BINARY, CATALOG\n"),
                       (["/nonexistent-build"], "the following arguments are required: CATALOG\n"),
                       (["/nonexistent-build", demo_db], "/nonexistent-build: no such executable"),
                       ([binary, "/nonexistent.sqlite"], "/nonexistent.sqlite: no such catalog file"),
                       ([binary, demo_db, "ten"], "argument N: invalid int value: 'ten'"),
                       ([binary, demo_db, "10", "0"], "ROUNDS must be at least 1"),
                       ([binary, demo_db, "10", "1", "100", "0"], "MAX-CONNECTIONS must be at least 1")):
        p = subprocess.run([sys.executable, tool, *args], capture_output=True, timeout=30)
        err = p.stderr.decode()
        assert p.returncode == 2 and says in err and "Traceback" not in err, (args, p.returncode, err)


@pytest.mark.parametrize("tool, args, says", [
    ("behind_nginx.py", [], "the following arguments are required: BINARY, CATALOG-COPY\n"),
    ("commits.py", ["gw"], "the following arguments are required: PORT, SECONDS, DB\n"),
    ("commits.py", ["gw", "80x", "1", "db"], "argument PORT: invalid int value: '80x'"),
    ("first-category.py", ["gw", "db"], "the following arguments are required: WORKERS\n"),
    ("overload_memory.py", ["gw", "db", "1", "2", "3"], "the following arguments are required: MODE\n"),
    ("overload_memory.py", ["gw", "db", "one", "2", "3", "plain"], "argument C: invalid int value: 'one'"),
    ("version_mix.py", ["a"], "the following arguments are required: BINARY-B\n"),
    ("version_mix.py", ["a", "b", "many"], "argument PRODUCTS: invalid int value: 'many'"),
])
def test_measurement_scripts_name_a_missing_or_bad_argument(tool, args, says):
    """The scripts under bench/tools/ that docs/FAULTS.md runs read sys.argv by hand: run with
    an argument missing, each stopped with an IndexError traceback (a stop-42 audit found
    close_cost.py shown that way in README.md). Through tool_args.positional each says which
    argument, under its usage line, and exits 2 before starting anything."""
    import os
    import sys
    path = os.path.join(os.path.dirname(__file__), "..", "..", "bench", "tools", tool)
    p = subprocess.run([sys.executable, path, *args], capture_output=True, timeout=30)
    err = p.stderr.decode()
    assert p.returncode == 2 and err.startswith("usage: ") and says in err and "Traceback" not in err, (p.returncode, err)
    help = subprocess.run([sys.executable, path, "--help"], capture_output=True, timeout=30)
    assert help.returncode == 0 and tool in help.stdout.decode(), help


def test_bump_version_past_the_largest_integer_is_exit_2_not_a_crash(binary, demo_db, tmp_path):
    """versionid is SQLite's 64-bit integer: a catalog whose version row is at its largest has no
    next version. bump-version trapped on the overflow (exit 132, a Swift backtrace)."""
    db = str(tmp_path / "c.sqlite")
    with open(demo_db, "rb") as src, open(db, "wb") as dst:
        dst.write(src.read())
    con = sqlite3.connect(db)
    con.execute("UPDATE version SET versionid = 9223372036854775806 WHERE versionid = (SELECT max(versionid) FROM version)")
    con.commit()
    con.close()
    code, out, _ = run(binary, "bump-version", "--db", db)
    assert code == 0 and out.startswith("version 9223372036854775807 ")
    code, out, err = run(binary, "bump-version", "--db", db)
    assert (code, out) == (2, "")
    assert err == (f"catalog-gateway: {db}: the version table's greatest versionid is 9223372036854775807, "
                   "the largest integer SQLite holds: there is no next version\n")
    con = sqlite3.connect(db)
    assert con.execute("SELECT count(*), max(versionid) FROM version WHERE versionid > 6").fetchone() == (2, 9223372036854775807)


def test_demo_db_writes_through_no_name_another_user_can_plant(binary, tmp_path):
    """demo-db wrote OUT.tmp and renamed it into place: anyone able to write to OUT's directory
    could plant OUT.tmp as a symlink to another SQLite file between the unlink and the open, and
    that file was written (and then moved to OUT). It now writes in a directory of its own
    (mkdtemp, 0700): what lies at OUT.tmp is not touched, and nothing is left beside OUT."""
    victim = tmp_path / "victim.sqlite"
    con = sqlite3.connect(victim)
    con.execute("CREATE TABLE secrets(x)")
    con.commit()
    con.close()
    before = victim.read_bytes()
    out = tmp_path / "out.sqlite"
    os.symlink(victim, str(out) + ".tmp")
    code, _, err = run(binary, "demo-db", "--out", str(out), "--products", "20")
    assert code == 0, err
    assert victim.read_bytes() == before
    assert os.path.islink(str(out) + ".tmp") and not os.path.islink(out)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.sqlite", "out.sqlite.tmp", "victim.sqlite"]
    assert sqlite3.connect(out).execute("SELECT count(*) FROM Product_Catalog").fetchone() == (20,)


def test_every_command_names_a_file_mistake_the_same_way(binary, tmp_path):
    """A new user's mistakes with --db, made with each command that reads a catalog: each gets
    one line, `catalog-gateway: PATH: …`, saying the same thing whichever command was run, and
    exit 2. bench-rows said "unable to open database file" for a missing file and "no such
    table: Product_Catalog" for another SQLite file; prepare, import, bump-version and bench-rows
    passed SQLite's "file is not a database" on (prepare as "not a SQLite catalog: …"), where
    query and serve say "not an SQLite database"; prepare and import put "cannot open:" before a
    directory's message."""
    text = tmp_path / "notes.sqlite"
    text.write_text("hello, not a database\n" * 100)
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as c:
        c.execute("CREATE TABLE t(x)")
    csv = tmp_path / "rows.csv"
    csv.write_text("keyid,Product\n1,A\n")
    cases = ((tmp_path / "missing.sqlite", "no such file"), (tmp_path, "is a directory, not an SQLite file"),
             (text, "not an SQLite database"), (other, "not a Radiant catalog: "))
    commands = (["query", "{ __typename }"], ["prepare"], ["import", str(csv)], ["bump-version"],
                ["bench-query", "--iterations", "1"], ["bench-rows", "--iterations", "1"])
    for path, says in cases:
        before = other.read_bytes()
        for command in commands:
            code, out, err = run(binary, command[0], "--db", str(path), *command[1:])
            assert (code, out) == (2, ""), (command, path, err)
            assert err.startswith(f"catalog-gateway: {path}: {says}") and err.count("\n") == 1, (command, path, err)
        assert other.read_bytes() == before


def test_import_from_the_command_line(binary, demo_db, tmp_path):
    """README's import: every bad record as FILE:LINE: record: field, nothing written and exit 2;
    --dry-run checks and writes nothing; --quiet prints nothing; a new version row only when
    something changed."""
    db = tmp_path / "c.sqlite"
    db.write_bytes(open(demo_db, "rb").read())
    before = db.read_bytes()
    bad = tmp_path / "bad.csv"
    bad.write_text("keyid,Product,cat\n9001,Thing,2\n9002,Other,x\n")
    code, out, err = run(binary, "import", "--db", str(db), str(bad))
    assert (code, out) == (2, "")
    assert err == (f'{bad}:3: record 2: cat: expected an integer or nothing, got "x"\n'
                   f"catalog-gateway: {bad}: 1 problem; nothing was written\n")
    good = tmp_path / "good.json"
    good.write_text('[{"id": 9001, "sku": "N1", "name": "New thing", "category": 2}]\n')
    code, out, err = run(binary, "import", "--db", str(db), "--dry-run", str(good))
    assert (code, out, err) == (0, f"{good}: 1 record, no problems (nothing written: --dry-run)\n", "")
    assert db.read_bytes() == before
    code, out, err = run(binary, "import", "--db", str(db), "--quiet", str(good))
    assert (code, out, err) == (0, "", "")
    version = lambda: sqlite3.connect(db).execute("SELECT max(versionid) FROM version").fetchone()[0]
    assert version() == 7
    code, out, _ = run(binary, "import", "--db", str(db), str(good))
    assert code == 0 and "nothing changed: no new version row (the catalog stays at version 7)" in out
    assert version() == 7


def _help_flags(binary, *command):
    text = subprocess.run([binary, *command, "--help"], capture_output=True, check=True).stdout.decode()
    options = text.split("\nOPTIONS:\n", 1)[1]
    flags = set()
    for spelled in re.findall(r"^  (--[a-z][a-z0-9-]*(?:/--[a-z][a-z0-9-]*)?)", options, re.M):
        flags.add(tuple(spelled.split("/")))
    return flags - {("--version",), ("--help",)}


def test_readme_commands_section_lists_every_flag_of_every_command(binary):
    """Each subcommand's flags (as its --help prints them) appear in README's Commands section,
    and every flag that section names is one a subcommand takes: a flag added without its
    README line, or renamed in one place only, fails here. cg-load's modes are in README too."""
    import pathlib
    readme = (pathlib.Path(__file__).resolve().parents[2] / "README.md").read_text()
    section = readme.split("\n## Commands\n", 1)[1].split("\n## ", 1)[0]
    named = set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*(?![*\w-])", section))  # not `--retain-*`
    top = subprocess.run([binary, "--help"], capture_output=True, check=True).stdout.decode()
    commands = re.findall(r"^  ([a-z][a-z-]+) ", top.split("SUBCOMMANDS:", 1)[1], re.M)
    assert {"serve", "query", "import", "prepare", "demo-db", "bump-version"} <= set(commands)
    every = set()
    for command in commands:
        assert f"`catalog-gateway {command}" in section, command
        for spellings in _help_flags(binary, command):
            every.update(spellings)
            assert any(f in named for f in spellings), (command, spellings)
    assert named - every - {"--help", "--version"} == set()
    cg_load = os.path.join(os.path.dirname(binary), "cg-load")
    top = subprocess.run([cg_load, "--help"], capture_output=True, check=True).stdout.decode()
    modes = re.findall(r"^  ([a-z][a-z-]+) ", top.split("SUBCOMMANDS:", 1)[1], re.M)
    assert len(modes) >= 6 and all(f"`{m}`" in readme for m in modes), modes


def test_a_catalog_this_user_may_not_read_says_so(binary):
    """A catalog owned by another user (mode 0600), or in a directory this user may not search,
    as a service user meets it: every command said SQLite's "unable to open database file" for
    the first and "no such file" (serve: "catalog not found") for the second, a file that is
    there. Both now say the system's reason. Run as nobody when the tests run as root."""
    import shutil
    import tempfile
    as_other = []
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("root without setpriv: no other user to run as")
        as_other = ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups"]
        if subprocess.run([*as_other, os.path.abspath(binary), "--version"], capture_output=True).returncode != 0:
            pytest.skip("nobody cannot run the binary where it is (a directory on its path is private)")
    base = tempfile.mkdtemp(prefix="cg-perm-")
    try:
        os.chmod(base, 0o755)
        locked = os.path.join(base, "locked")
        os.mkdir(locked)
        unreadable = os.path.join(base, "secret.sqlite")
        with sqlite3.connect(unreadable) as c:
            c.execute("CREATE TABLE hierarchy(id)")
        hidden = os.path.join(locked, "c.sqlite")
        shutil.copyfile(unreadable, hidden)
        rows = os.path.join(base, "rows.csv")
        with open(rows, "w") as f:
            f.write("keyid,Product\n1,A\n")
        os.chmod(unreadable, 0o600 if as_other else 0)
        os.chmod(locked, 0o700 if as_other else 0)
        commands = (["query", "{ __typename }"], ["prepare"], ["import", rows], ["bump-version"], ["bench-query", "--iterations", "1"],
                    ["bench-rows", "--iterations", "1"], ["serve", "--port", "0"])
        for path in (unreadable, hidden):
            for command in commands:
                p = subprocess.run([*as_other, os.path.abspath(binary), command[0], "--db", path, *command[1:]],
                                   capture_output=True, timeout=30)
                err = p.stderr.decode()
                assert (p.returncode, p.stdout) == (2, b""), (command, path, err)
                assert err.endswith(f"catalog-gateway: {path}: cannot open: Permission denied\n"), (command, path, err)
    finally:
        for d in (os.path.join(base, "locked"), base):
            if os.path.isdir(d):
                os.chmod(d, 0o755)
        shutil.rmtree(base)
