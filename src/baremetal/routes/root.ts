// GET / (the version document; no negotiation) and GET /v1 (links to every resource v1 serves at
// the request's version).
import type * as Wire from '../../client/baremetal-wire.js';
import { schemaRef } from '../schemas.js';
import type { Endpoint } from '../request.js';
import { MAX_VERSION, MIN_VERSION } from '../microversion.js';

const version = (base: string): Wire.Version => ({
  id: 'v1',
  links: [{ href: `${base}/v1/`, rel: 'self' }],
  status: 'CURRENT',
  min_version: MIN_VERSION,
  version: MAX_VERSION,
});

export const root: Endpoint = {
  public: true,
  summary: 'the root document: API versions',
  ok: [200],
  response: schemaRef('Root'),
  unversioned: true,
  async handle(req) {
    req.queryArgs();
    const body: Wire.Root = {
      name: 'OpenStack Ironic API',
      description: 'allot: an Ironic-compatible bare-metal API for nodes and their allocation.',
      default_version: version(req.baseUrl),
      versions: [version(req.baseUrl)],
    };
    return { body };
  },
};

const links = (base: string, kind: string): Wire.Link[] => [
  { href: `${base}/v1/${kind}/`, rel: 'self' },
  { href: `${base}/${kind}/`, rel: 'bookmark' },
];

export const v1: Endpoint = {
  public: true,
  summary: 'the v1 document: links to the resources',
  ok: [200],
  response: schemaRef('V1'),
  async handle(req) {
    req.queryArgs();
    const base = req.baseUrl;
    const body: Wire.V1 = {
      id: 'v1',
      links: [
        { href: `${base}/v1/`, rel: 'self' },
        { href: 'https://docs.openstack.org/ironic/latest/contributor/webapi.html', rel: 'describedby', type: 'text/html' },
      ],
      media_types: { base: 'application/json', type: 'application/vnd.openstack.ironic.v1+json' },
      chassis: links(base, 'chassis'),
      nodes: links(base, 'nodes'),
      ports: links(base, 'ports'),
      drivers: links(base, 'drivers'),
      version: version(base),
    };
    // in Ironic's order, each from the version that added it
    if (req.mv.atLeast('1.23')) body.portgroups = links(base, 'portgroups');
    if (req.mv.atLeast('1.32')) body.volume = links(base, 'volume');
    if (req.mv.atLeast('1.49')) body.conductors = links(base, 'conductors');
    if (req.mv.atLeast('1.52')) body.allocations = links(base, 'allocations');
    if (req.mv.atLeast('1.55')) body.deploy_templates = links(base, 'deploy_templates');
    return { body };
  },
};
