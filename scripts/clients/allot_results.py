# A pytest plugin (loaded with `-p allot_results`) that writes one JSON line per test to the file
# ALLOT_RESULTS_FILE names: {"test", "outcome": passed|failed|skipped, "reason"}. scripts/test-clients.ts
# reads it to count each suite and to match failures against its allow-list; a failure in setUp or
# tearDown counts as the test's failure, as stestr would count it.
import json
import os

_results = {}


def _reason(report):
    if report.skipped and isinstance(report.longrepr, tuple):
        return str(report.longrepr[2])
    text = str(report.longrepr or '')
    lines = [line for line in text.splitlines() if line.strip()]
    return '\n'.join(lines[-12:])


def pytest_runtest_logreport(report):
    # 'osc_placement/tests/functional/test_trait.py::TestTrait::test_list' → 'test_trait.py::TestTrait::test_list'
    test = report.nodeid.split('tests/functional/', 1)[-1]
    entry = _results.setdefault(test, {'test': test, 'outcome': 'passed', 'reason': ''})
    if report.failed and entry['outcome'] != 'failed':
        entry.update(outcome='failed', reason='%s: %s' % (report.when, _reason(report)))
    elif report.skipped and entry['outcome'] == 'passed':
        entry.update(outcome='skipped', reason=_reason(report))


def pytest_sessionfinish(session):
    path = os.environ.get('ALLOT_RESULTS_FILE')
    if path:
        with open(path, 'w') as out:
            for entry in _results.values():
                out.write(json.dumps(entry) + '\n')
