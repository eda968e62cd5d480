// GET / : the version document clients use to discover the microversion range.
import type { PlacementVersions } from '../../client/placement-wire.js';
import type { Endpoint } from '../request.js';
import { MAX_VERSION, MIN_VERSION } from '../microversion.js';
import { schemaRef } from '../schemas.js';

export const root: Endpoint = {
  summary: 'the version document: the microversion range',
  ok: [200],
  response: schemaRef('PlacementVersions'),
  public: true,
  async handle(req) {
    const body: PlacementVersions = {
      versions: [
        {
          id: 'v1.0',
          max_version: MAX_VERSION,
          min_version: MIN_VERSION,
          status: 'CURRENT',
          links: [{ rel: 'self', href: req.prefix }],
        },
      ],
    };
    return { body };
  },
};
