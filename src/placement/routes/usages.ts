// /resource_providers/{uuid}/usages and /usages
import type * as Wire from '../../client/placement-wire.js';
import type { Endpoint } from '../request.js';
import * as schemas from '../schemas.js';
import * as usages from '../services/usages.js';

export const forProvider: Endpoint = {
  summary: "a provider's usages per class",
  ok: [200],
  response: schemas.schemaRef('ProviderUsages'),
  policy: 'placement:resource_providers:usages',
  async handle(req, ctx) {
    req.requireJsonAccept();
    const { provider, usages: byClass } = await usages.ofProvider(ctx, req.param('uuid'));
    const body: Wire.ProviderUsages = { resource_provider_generation: provider.generation, usages: byClass };
    return { body };
  },
};

export const total: Endpoint = {
  summary: "a project's (and user's) usages",
  query: schemas.usagesQuery,
  ok: [200],
  response: schemas.schemaRef('TotalUsages'),
  since: '1.9',
  // The target is the project asked about: a project's readers see their own project's usages only.
  policy: 'placement:usages',
  scoped: true,
  async handle(req, ctx) {
    req.requireJsonAccept();
    req.authorizeScoped({ project_id: req.query.get('project_id') ?? null });
    const q = req.queryObject<{ project_id: string; user_id?: string; consumer_type?: string }>();
    const filter = { projectId: q.project_id, userId: q.user_id, consumerType: q.consumer_type };
    const body: Wire.TotalUsages = { usages: await usages.ofProject(ctx, filter, req.mv.atLeast('1.38')) };
    return { body };
  },
};
