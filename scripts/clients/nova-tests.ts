// Which of Nova's functional tests (Debian python3-nova 26.2.2, nova/tests/functional) the `nova`
// and `nova-full` suites of scripts/test-clients.ts run against allot's Placement: modules, classes
// or tests as unittest names them, under nova.tests.functional.

const servers = 'test_servers';
const resourceRequest = 'test_servers_resource_request';
const manage = 'test_nova_manage';

/**
 * `--suites nova-full`: the report client; every class of test_servers that moves servers or asks
 * for resources beyond the flavor's (nested providers, traits, accelerators, consumer-generation
 * conflicts); all of test_servers_resource_request (QoS ports, same_subtree groups); reshape; the
 * placement commands of nova-manage; the regressions about allocations and providers.
 */
export const NOVA_FULL = [
  'test_report_client',
  ...[
    'ServerMovingTests',
    'ServerMovingTestsWithNestedComputes',
    'ServerMovingTestsWithNestedResourceRequests',
    'ServerMovingTestsFromFlatToNested',
    'ServerLiveMigrateForceAndAbort',
    'ServerLiveMigrateForceAndAbortWithNestedResourcesRequest',
    'ServerRescheduleTests',
    'ServerRescheduleTestsWithNestedResourcesRequest',
    'ServerBuildAbortTests',
    'ServerBuildAbortTestsWithNestedResourceRequest',
    'ServerUnshelveSpawnFailTests',
    'ServerUnshelveSpawnFailTestsWithNestedResourceRequest',
    'ServerSoftDeleteTests',
    'ServerSoftDeleteTestsWithNestedResourceRequest',
    'ServerDeleteBuildTests',
    'ServerTestV256SingleCellMultiHostTestCase',
    'ServerTestV256MultiCellTestCase',
    'ServerTestV256RescheduleTestCase',
    'PollUnconfirmedResizesTest',
    'ConsumerGenerationConflictTest',
    'TraitsBasedSchedulingTest',
    'AcceleratorServerTest',
    'AcceleratorServerReschedTest',
    'AcceleratorServerOpsTest',
    'PortAcceleratorServerOpsTest',
    'PortAcceleratorServerCreateRejectTest',
    'PortAndFlavorAccelsServerCreateTest',
    'TwoPortsAcceleratorServerOpsTest',
  ].map((c) => `${servers}.${c}`),
  resourceRequest,
  'libvirt.test_reshape',
  ...[
    'TestNovaManagePlacementHealAllocations',
    'TestNovaManagePlacementHealPortAllocations',
    'TestNovaManagePlacementHealPortAllocationsExtended',
    'TestNovaManagePlacementHealPortAllocationsMultiGroup',
    'TestNovaManagePlacementAudit',
    'TestNovaManagePlacementSyncAggregates',
  ].map((c) => `${manage}.${c}`),
  // every regression module that reads or checks allocations, usages or providers
  ...[
    1671648, 1679750, 1702454, 1718512, 1719730, 1735407, 1764556, 1764883, 1790204, 1794996, 1825537, 1837955, 1839560, 1845291, 1848343, 1849165, 1853009,
    1862633, 1886418, 1896463, 2025480,
  ].map((bug) => `regressions.test_bug_${bug}`),
].map((name) => `nova.tests.functional.${name}`);

/**
 * `--suites nova` (CI): a part of the above that touches every kind of Placement call Nova makes:
 * the report client (inventories, traits, aggregates, reshape), moves and evacuations of servers
 * with nested resource requests (migration swaps of allocations), same_subtree request groups,
 * consumer-generation conflicts, heal allocations and audit.
 */
export const NOVA_CI = [
  'test_report_client',
  `${servers}.ServerMovingTestsWithNestedResourceRequests`,
  `${servers}.ConsumerGenerationConflictTest`,
  `${resourceRequest}.MultiGroupResourceRequestBasedSchedulingTest`,
  'libvirt.test_reshape',
  `${manage}.TestNovaManagePlacementHealAllocations`,
  `${manage}.TestNovaManagePlacementAudit`,
].map((name) => `nova.tests.functional.${name}`);
