// Every option reaches the config from the command line: the key a flag fills (commander's
// attribute name) is the config key, so a flag can never be silently ignored.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Option } from 'commander';
import { OPTIONS, loadConfig } from '../../src/config.js';

test('each flag fills the config key of the same name', () => {
  for (const spec of OPTIONS) assert.equal(new Option(spec.flag).attributeName(), spec.key, spec.flag);
});

test('bare-metal timings are given in seconds and kept in milliseconds; nonsense is refused', () => {
  const config = loadConfig(
    { heartbeatInterval: '0.2', heartbeatTimeout: '1.5', takeoverInterval: '0', transitionTime: '0.05', allocationDelay: '2', baremetalBackend: 'placement' },
    {},
  );
  assert.equal(config.heartbeatInterval, 200);
  assert.equal(config.heartbeatTimeout, 1500);
  assert.equal(config.takeoverInterval, 0);
  assert.equal(config.transitionTime, 50);
  assert.equal(config.allocationDelay, 2000);
  assert.equal(config.baremetalBackend, 'placement');
  assert.equal(loadConfig({}, { ALLOT_TAKEOVER_INTERVAL: '5' }).takeoverInterval, 5000);
  assert.throws(() => loadConfig({ baremetalBackend: 'ironic' }, {}), /baremetal backend must be one of database, placement/);
  assert.throws(() => loadConfig({ transitionTime: '-1' }, {}), /transition time must be a number of seconds/);
  assert.throws(() => loadConfig({ heartbeatInterval: '10', heartbeatTimeout: '5' }, {}), /heartbeat timeout .* must be longer than the heartbeat interval/);
});
