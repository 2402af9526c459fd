#!/usr/bin/env python3
"""Counts what ctest ran, from its JUnit files: tests passed, failed and skipped, each skip with its reason.

    scripts/test_report.py build/test/ctest.xml [more.xml ...]   # one file per ctest run (`--output-junit`)

A ctest entry is one test, except an entry whose output is Python unittest's (`python3 -m unittest -v`, as
the e2e entry runs): its Python tests count one by one. A skip counts as skipped, never as passed:
  - GoogleTest's GTEST_SKIP() (gtest_discover_tests makes ctest mark it skipped); the reason is the message
    printed under "Skipped" in the test's output;
  - unittest's skip (`... skipped 'reason'` in its verbose output);
  - a ctest entry ctest itself skipped (SKIP_RETURN_CODE, SKIP_REGULAR_EXPRESSION) or that is disabled.
An entry ctest did not run for another reason (no executable, a failed fixture) counts as failed, and so
does a GoogleTest test that failed an assertion before it skipped.

Prints every skipped test with its reason, every failed test, then the closing line
`tests: N passed, N failed, N skipped`. Exits 1 when a test failed, when a file is missing or unreadable, or
when a run holds no tests at all; 0 otherwise. Reads ctest's output as stored in the JUnit file, so ctest
must keep it whole (`--test-output-size-passed` / `--test-output-size-failed`, as scripts/test.sh sets).
"""
import ast
import os
import re
import sys
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass, field

# ctest's completion status for the tests it skipped on purpose (cmCTestTestHandler).
CTEST_SKIP_STATUSES = ("SKIP_REGULAR_EXPRESSION_MATCHED", "SKIP_RETURN_CODE")

UNITTEST_TEST_LINE = re.compile(r"^(\w+) \(([\w.]+)\)(?: \.\.\. (.*))?$")
UNITTEST_RESULT = re.compile(r"^(ok|FAIL|ERROR|expected failure|unexpected success|skipped (.*))$")
UNITTEST_RAN = re.compile(r"^Ran (\d+) tests? in ")
UNITTEST_VERDICT = re.compile(r"^(OK|FAILED)(?: \((.*)\))?$")
UNITTEST_FAILURE_HEADER = re.compile(r"^(FAIL|ERROR|UNEXPECTED SUCCESS): (\w+) \(([\w.]+)\)")


@dataclass
class Tally:
    passed: int = 0
    failed: list = field(default_factory=list)   # (name, why)
    skipped: list = field(default_factory=list)  # (name, reason)

    def add(self, other):
        self.passed += other.passed
        self.failed += other.failed
        self.skipped += other.skipped

    def total(self):
        return self.passed + len(self.failed) + len(self.skipped)


def gtest_skip_reason(output):
    """The message GTEST_SKIP() printed: the lines after `file:line: Skipped`, up to gtest's next `[` line."""
    lines = output.splitlines()
    for i, line in enumerate(lines):
        if line.endswith(": Skipped"):
            message = []
            for follow in lines[i + 1:]:
                if follow.startswith("["):
                    break
                message.append(follow)
            text = " ".join(part.strip() for part in message if part.strip())
            return text or "GTEST_SKIP() without a message"
    return None


def unittest_id(method, where):
    """module.Class.method, from `method (module.Class.method)` (Python 3.11) or `method (module.Class)`."""
    return where if where.endswith("." + method) else f"{where}.{method}"


def unittest_tally(entry, output):
    """Counts the Python tests of one `unittest -v` run; None when the output is not unittest's."""
    lines = output.splitlines()
    results = {}  # test id -> result text (verbose lines), in order
    pending = None
    ran = None
    verdict = None
    failure_headers = []
    for line in lines:
        match = UNITTEST_TEST_LINE.match(line)
        if match:
            test_id = unittest_id(match.group(1), match.group(2))
            if match.group(3) is not None and UNITTEST_RESULT.match(match.group(3)):
                results[test_id] = match.group(3)
                pending = None
            else:
                pending = test_id
            continue
        if pending and UNITTEST_RESULT.match(line):  # the result, after lines the test itself printed
            results[pending] = line
            pending = None
            continue
        if UNITTEST_RAN.match(line):
            ran = int(UNITTEST_RAN.match(line).group(1))
        elif ran is not None and UNITTEST_VERDICT.match(line):
            verdict = UNITTEST_VERDICT.match(line)
        header = UNITTEST_FAILURE_HEADER.match(line)
        if header:
            failure_headers.append((header.group(1), unittest_id(header.group(2), header.group(3))))
    if ran is None and not results:
        return None

    tally = Tally()
    prefix = entry + "/"
    for test_id, result in results.items():
        if result == "ok" or result == "expected failure":
            tally.passed += 1
        elif result.startswith("skipped"):
            reason = result[len("skipped "):]
            try:
                reason = ast.literal_eval(reason)
            except (ValueError, SyntaxError):
                pass
            tally.skipped.append((prefix + test_id, reason or "skipped without a reason"))
        else:
            tally.failed.append((prefix + test_id, result))
    if ran is None or verdict is None:
        during = f", during {pending}" if pending else ""
        tally.failed.append((entry, f"ended before unittest's summary (crashed or timed out{during})"))
        return tally

    # The summary is authoritative for the counts; the verbose lines name the tests.
    counts = {}
    for item in (verdict.group(2) or "").split(","):
        if "=" in item:
            key, value = item.split("=")
            counts[key.strip()] = int(value)
    skipped = counts.get("skipped", 0)
    failed = counts.get("failures", 0) + counts.get("errors", 0) + counts.get("unexpected successes", 0)
    for _ in range(skipped - len(tally.skipped)):
        tally.skipped.append((prefix + "?", "a unittest skip whose reason is not in the output"))
    named_failures = {name for name, _ in tally.failed}
    for kind, test_id in failure_headers:  # setUpClass errors and subtests have no verbose result line
        if len(tally.failed) >= failed:
            break
        if prefix + test_id not in named_failures:
            tally.failed.append((prefix + test_id, kind))
            named_failures.add(prefix + test_id)
    for _ in range(failed - len(tally.failed)):
        tally.failed.append((entry + "/?", "a unittest failure not named in the output"))
    tally.passed = max(0, ran - skipped - len(tally.failed))
    if verdict.group(1) == "FAILED" and not tally.failed:
        tally.failed.append((entry, "unittest said FAILED"))
    return tally


def case_tally(case):
    """The tally of one ctest entry (a <testcase> of ctest's JUnit file)."""
    name = case.get("name", "?")
    status = case.get("status", "")
    output = "".join(node.text or "" for node in case.iter("system-out"))
    failure = case.find("failure")
    skipped = case.find("skipped")
    tally = unittest_tally(name, output)
    if tally is not None:
        if status != "run" and not tally.failed:  # e.g. a crash after unittest's summary
            why = failure.get("message") if failure is not None else ""
            tally.failed.append((name, f"ctest status '{status}' {why}".strip()))
        return tally

    tally = Tally()
    gtest_failed = re.search(r"^\[  FAILED  \] ", output, re.MULTILINE)
    if gtest_failed:  # ctest calls a test skipped when "[  SKIPPED ]" shows, even after a failed assertion
        tally.failed.append((name, f"GoogleTest reported FAILED (ctest status '{status}')"))
    elif status == "run" and failure is None:
        tally.passed = 1
    elif status == "disabled":
        tally.skipped.append((name, "disabled in CMake (DISABLED property)"))
    elif status == "notrun" and skipped is not None and skipped.get("message", "").startswith(CTEST_SKIP_STATUSES):
        last_line = next((line.strip() for line in reversed(output.splitlines()) if line.strip()), "")
        reason = gtest_skip_reason(output) or f"{last_line or 'no output'} (ctest: {skipped.get('message')})"
        tally.skipped.append((name, reason))
    else:
        why = failure if failure is not None else skipped
        message = why.get("message", "") if why is not None else ""
        tally.failed.append((name, message or f"ctest status '{status}' (its output is above)"))
    return tally


def file_tally(path):
    """The tally of one ctest run; a file that is missing, unreadable or empty of tests fails."""
    label = os.path.splitext(os.path.basename(path))[0]
    try:
        root = ElementTree.parse(path).getroot()
    except (OSError, ElementTree.ParseError) as err:
        return label, Tally(failed=[(label, f"no readable ctest JUnit file at {path}: {err}")])
    tally = Tally()
    for case in root.iter("testcase"):
        tally.add(case_tally(case))
    if tally.total() == 0:
        tally.failed.append((label, f"ctest ran no tests ({path})"))
    return label, tally


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    runs = [file_tally(path) for path in argv[1:]]
    total = Tally()
    for label, tally in runs:
        print(f"{label}: {tally.passed} passed, {len(tally.failed)} failed, {len(tally.skipped)} skipped")
        total.add(tally)
    several = len(runs) > 1
    for heading in ("skipped", "failed"):
        listed = [(label, name, why) for label, tally in runs for name, why in getattr(tally, heading)]
        if listed:
            print(f"{heading} ({len(listed)}):")
            for label, name, why in listed:
                print(f"  {f'[{label}] ' if several else ''}{name}: {why}")
    print(f"tests: {total.passed} passed, {len(total.failed)} failed, {len(total.skipped)} skipped")
    return 1 if total.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
