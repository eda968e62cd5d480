// /resource_providers/{uuid}/usages and /usages
import type { Endpoint } from '../request.js';
import * as schemas from '../schemas.js';
import { projectUsages, providerUsages } from '../store/usages.js';

export const forProvider: Endpoint = {
  policy: 'placement:resource_providers:usages',
  async handle(req, ctx) {
    req.requireJsonAccept();
    const { provider, usages } = await providerUsages(ctx.database, req.param('uuid'));
    return { body: { resource_provider_generation: provider.generation, usages } };
  },
};

export const total: Endpoint = {
  since: '1.9',
  async handle(req, ctx) {
    req.requireJsonAccept();
    // The target is the project asked about: a project's readers see their own project's usages only.
    req.authorize('placement:usages', { project_id: req.query.get('project_id') ?? null });
    const q = req.queryObject<{ project_id: string; user_id?: string; consumer_type?: string }>(schemas.usagesQuery);
    const usages = await projectUsages(ctx.database, { projectId: q.project_id, userId: q.user_id, consumerType: q.consumer_type }, req.mv.atLeast('1.38'));
    return { body: { usages } };
  },
};
