// GET / : the version document clients use to discover the microversion range.
import type { PlacementContext } from '../context.js';
import type { Endpoint } from '../http.js';
import { MAX_VERSION, MIN_VERSION } from '../microversion.js';

export const root: Endpoint<PlacementContext> = {
  async handle(_req, ctx) {
    return {
      body: {
        versions: [
          {
            id: 'v1.0',
            max_version: MAX_VERSION,
            min_version: MIN_VERSION,
            status: 'CURRENT',
            links: [{ rel: 'self', href: ctx.prefix }],
          },
        ],
      },
    };
  },
};
