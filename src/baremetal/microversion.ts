// Ironic microversions: every version allot answers, what each added, and the negotiation of
// `X-OpenStack-Ironic-API-Version` (or `OpenStack-API-Version: baremetal X.Y`). The maximum is the
// one the reference Ironic (21.x) serves, so clients negotiate the same version against either.
// Versions whose feature allot does not serve (ports, chassis, BIOS, …) are still accepted: the
// endpoints they add are simply absent, as the API reference allows for disabled features.
import { Microversion } from '../core/microversion.js';
import { frameworkError } from './errors.js';

/** Every microversion, with what it added. The last entry is the maximum we serve. */
export const VERSIONS: ReadonlyArray<readonly [string, string]> = [
  ['1.1', 'the API when versioning began'],
  ['1.2', "'available' replaces the None provision state"],
  ['1.3', 'node.driver_internal_info'],
  ['1.4', "'manageable' state; manage and provide verbs"],
  ['1.5', 'node names'],
  ['1.6', 'inspection states and the inspect verb'],
  ['1.7', 'node.clean_step'],
  ['1.8', '`fields` selects what a GET returns'],
  ['1.9', 'provision_state filter on node lists'],
  ['1.10', 'node names may use any RFC 3986 unreserved character'],
  ['1.11', "new nodes start in 'enroll'"],
  ['1.12', 'RAID configuration fields'],
  ['1.13', 'abort verb'],
  ['1.14', "node 'states' link"],
  ['1.15', 'manual cleaning (clean verb)'],
  ['1.16', 'driver filter on node lists'],
  ['1.17', 'adopt verb'],
  ['1.18', 'port internal_info (ports are not served by allot)'],
  ['1.19', 'port link fields (not served)'],
  ['1.20', 'node.network_interface'],
  ['1.21', 'node.resource_class and its list filter'],
  ['1.22', 'ramdisk lookup and heartbeat (not served)'],
  ['1.23', 'port groups (not served)'],
  ['1.24', "node 'portgroups' link"],
  ['1.25', 'chassis_uuid may be unset'],
  ['1.26', 'port group mode (not served)'],
  ['1.27', 'soft power off, soft reboot and power timeout'],
  ['1.28', 'VIFs (not served)'],
  ['1.29', 'inject NMI (not served)'],
  ['1.30', 'dynamic drivers'],
  ['1.31', 'node hardware interface fields'],
  ['1.32', "volumes; node 'volume' link"],
  ['1.33', 'node.storage_interface'],
  ['1.34', 'port physical network (not served)'],
  ['1.35', 'configdrive on rebuild'],
  ['1.36', 'agent version in heartbeat (not served)'],
  ['1.37', 'node traits'],
  ['1.38', 'rescue verbs and node.rescue_interface'],
  ['1.39', "'inspect wait' state"],
  ['1.40', 'node.bios_interface'],
  ['1.41', 'abort inspection'],
  ['1.42', 'node.fault and its list filter'],
  ['1.43', '?detail=True on node lists'],
  ['1.44', 'node.deploy_step'],
  ['1.45', 'reset_interfaces on node PATCH'],
  ['1.46', 'node.conductor_group and its list filter'],
  ['1.47', 'node.automated_clean'],
  ['1.48', 'node.protected and protected_reason'],
  ['1.49', 'node.conductor and /v1/conductors'],
  ['1.50', 'node.owner and its list filter'],
  ['1.51', 'node.description'],
  ['1.52', 'allocations: /v1/allocations, /v1/nodes/{node}/allocation, node.allocation_uuid'],
  ['1.53', 'smart NIC ports (not served)'],
  ['1.54', 'events (not served)'],
  ['1.55', 'deploy templates (not served)'],
  ['1.56', 'configdrive as a JSON object'],
  ['1.57', 'PATCH /v1/allocations/{allocation} (name, extra)'],
  ['1.58', 'backfilling an allocation for a deployed node (POST with node)'],
  ['1.59', 'vendor_data in configdrive'],
  ['1.60', 'allocation.owner and its list filter'],
  ['1.61', 'node.retired and retired_reason'],
  ['1.62', 'agent token (not served)'],
  ['1.63', 'indicators (not served)'],
  ['1.64', 'port network type (not served)'],
  ['1.65', 'node.lessee and its list filter'],
  ['1.66', 'node.network_data'],
  ['1.67', 'VIF attach by port (not served)'],
  ['1.68', 'agent_verify_ca (not served)'],
  ['1.69', 'deploy_steps when deploying'],
  ['1.70', 'disable_ramdisk for manual cleaning'],
  ['1.71', 'scope based roles signifier'],
  ['1.72', 'agent status in heartbeat (not served)'],
  ['1.73', 'deploy and undeploy verbs'],
  ['1.74', 'BIOS registry (not served)'],
  ['1.75', 'node.boot_mode and secure_boot'],
  ['1.76', 'changing boot mode (not served)'],
  ['1.77', 'fields on driver lists (not served)'],
  ['1.78', 'node history (not served)'],
  ['1.79', 'an allocation prefers the node whose name equals its own'],
  ['1.80', 'project scoped node creation'],
  ['1.81', 'node inventory (not served)'],
  ['1.82', 'node.shard and the shard filters'],
];

export const MIN_VERSION = VERSIONS[0]![0];
export const MAX_VERSION = VERSIONS[VERSIONS.length - 1]![0];
const MIN = Microversion.parse(MIN_VERSION);
const MAX = Microversion.parse(MAX_VERSION);

/**
 * The version a request asked for. No header means the minimum (1.1), as in Ironic; `latest` the
 * maximum; anything else unparsable or out of range is a 406 carrying the min/max headers only.
 */
export function negotiate(headers: Record<string, string | string[] | undefined>): Microversion {
  const requested = requestedVersion(headers);
  if (requested === null) return MIN;
  if (requested.toLowerCase() === 'latest') return MAX;
  const m = /^(\d+)\.(\d+)$/.exec(requested);
  if (!m) throw frameworkError(406, 'Invalid value for X-OpenStack-Ironic-API-Version header', { versionRangeOnly: true });
  const version = new Microversion(Number(m[1]), Number(m[2]));
  if (version.major !== MAX.major) {
    throw frameworkError(
      406,
      `Version ${version} was requested but the major version is not supported by this service. The supported version range is: [${MIN}, ${MAX}].`,
      { versionRangeOnly: true },
    );
  }
  if (version.compare(MIN) < 0 || version.compare(MAX) > 0) {
    throw frameworkError(
      406,
      `Version ${version} was requested but the minor version is not supported by this service. The supported version range is: [${MIN}, ${MAX}].`,
      { versionRangeOnly: true },
    );
  }
  return version;
}

function requestedVersion(headers: Record<string, string | string[] | undefined>): string | null {
  // The newer standard header wins when it names baremetal, as in Ironic since 2024.2.
  const standard = headers['openstack-api-version'];
  for (const value of Array.isArray(standard) ? standard : standard === undefined ? [] : [standard]) {
    for (const part of value.split(',')) {
      const [service, ...rest] = part.trim().split(/\s+/);
      if (service?.toLowerCase() === 'baremetal') return rest.join(' ').trim();
    }
  }
  const legacy = headers['x-openstack-ironic-api-version'];
  if (legacy === undefined) return null;
  return (Array.isArray(legacy) ? legacy[legacy.length - 1]! : legacy).trim();
}

/** Response headers that tell a client what we serve (all /v1 responses; 406 gets only these). */
export function versionRangeHeaders(): Record<string, string> {
  return {
    'x-openstack-ironic-api-minimum-version': MIN_VERSION,
    'x-openstack-ironic-api-maximum-version': MAX_VERSION,
  };
}
