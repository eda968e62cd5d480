// Deploy templates: read, create, patch, delete, each write one transaction; a name or uuid taken is refused.
import { newUuid } from '../../core/uuid.js';
import { transaction } from '../../db/transaction.js';
import type { BaremetalContext } from '../context.js';
import {
  type DeployTemplateRecord,
  deleteDeployTemplateRow,
  deployTemplateNotFound,
  findDeployTemplate,
  insertDeployTemplate,
  listDeployTemplates,
  requireDeployTemplate,
  updateDeployTemplate,
} from '../store/deploy-templates.js';
import type { Page } from '../core/paging.js';
import { asJson, uniquely } from './resource-writes.js';
import { baremetalDomainError } from '../core/domain-errors.js';

export type { DeployTemplateRecord } from '../store/deploy-templates.js';

export interface DeployTemplateFields {
  /** a trait */
  name: string;
  /** checked deploy steps, priorities as numbers */
  steps: unknown[];
  extra: unknown;
}

const templateUuidTaken = (uuid: string) => baremetalDomainError('deploy_template_uuid_taken', { uuid }, `a deploy template has uuid ${uuid}`);
const templateNameTaken = (name: string) => baremetalDomainError('deploy_template_name_taken', { name }, `a deploy template is named ${name}`);

export async function createDeployTemplate(ctx: BaremetalContext, uuid: string | null, f: DeployTemplateFields): Promise<DeployTemplateRecord> {
  const templateUuid = uuid ?? newUuid();
  return uniquely(
    () =>
      transaction(ctx.database, async (tx) => {
        if (await findDeployTemplate(tx, templateUuid)) throw templateUuidTaken(templateUuid);
        if (await findDeployTemplate(tx, f.name)) throw templateNameTaken(f.name);
        await insertDeployTemplate(tx, {
          uuid: templateUuid,
          name: f.name,
          steps: JSON.stringify(f.steps),
          extra: asJson(f.extra),
          created_at: tx.clock.nowIso(),
          updated_at: null,
        });
        return (await findDeployTemplate(tx, templateUuid))!;
      }),
    async () => ((await findDeployTemplate(ctx.database, templateUuid)) ? templateUuidTaken(templateUuid) : templateNameTaken(f.name)),
  );
}

/** The deploy template with this uuid or name, or deploy_template_not_found. */
export function getDeployTemplate(ctx: BaremetalContext, ident: string): Promise<DeployTemplateRecord> {
  return requireDeployTemplate(ctx.database, ident);
}

export function listDeployTemplatePage(ctx: BaremetalContext, page: Page): Promise<DeployTemplateRecord[]> {
  return listDeployTemplates(ctx.database, page);
}

export function deployTemplateDocument(t: DeployTemplateRecord): Record<string, unknown> {
  return { uuid: t.uuid, name: t.name, steps: JSON.parse(t.steps), extra: JSON.parse(t.extra) };
}

export async function patchDeployTemplate(
  ctx: BaremetalContext,
  ident: string,
  edit: (doc: Record<string, unknown>) => DeployTemplateFields,
): Promise<DeployTemplateRecord> {
  return uniquely(
    () =>
      transaction(ctx.database, async (tx) => {
        const template = await findDeployTemplate(tx, ident);
        if (!template) throw deployTemplateNotFound(ident);
        const f = edit(deployTemplateDocument(template));
        if (f.name !== template.name && (await findDeployTemplate(tx, f.name))) throw templateNameTaken(f.name);
        await updateDeployTemplate(tx, template.id, { name: f.name, steps: JSON.stringify(f.steps), extra: asJson(f.extra), updated_at: tx.clock.nowIso() });
        return (await findDeployTemplate(tx, template.uuid))!;
      }),
    async () => baremetalDomainError('deploy_template_changed_concurrently', {}, 'the name of the patch was taken concurrently'),
  );
}

export async function deleteDeployTemplate(ctx: BaremetalContext, ident: string): Promise<void> {
  await transaction(ctx.database, async (tx) => {
    const template = await findDeployTemplate(tx, ident);
    if (!template) throw deployTemplateNotFound(ident);
    await deleteDeployTemplateRow(tx, template.id);
  });
}
