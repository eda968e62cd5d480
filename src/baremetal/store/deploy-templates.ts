// SQL for deploy templates.
import type { Insertable, Updateable } from 'kysely';
import { isUuidLike, normalizeUuid } from '../../core/uuid.js';
import type { Db, Tx } from '../../db/database.js';
import type { BaremetalDeployTemplateTable } from '../../db/schema.js';
import type { Page } from '../core/paging.js';
import { applyPage } from './paging.js';
import { baremetalDomainError } from '../core/domain-errors.js';

export type DeployTemplateRecord = { id: number; uuid: string; name: string; steps: string; extra: string; created_at: string; updated_at: string | null };

export const deployTemplateNotFound = (ident: string) => baremetalDomainError('deploy_template_not_found', { ident }, `no deploy template ${ident}`);

/** A deploy template by uuid or name. */
export async function findDeployTemplate(db: Db, ident: string): Promise<DeployTemplateRecord | undefined> {
  const q = db.db.selectFrom('baremetal_deploy_templates').selectAll();
  return (isUuidLike(ident) ? q.where('uuid', '=', normalizeUuid(ident)) : q.where('name', '=', ident)).executeTakeFirst();
}

export async function requireDeployTemplate(db: Db, ident: string): Promise<DeployTemplateRecord> {
  const found = await findDeployTemplate(db, ident);
  if (!found) throw deployTemplateNotFound(ident);
  return found;
}

export async function listDeployTemplates(db: Db, page: Page): Promise<DeployTemplateRecord[]> {
  return applyPage(db.db.selectFrom('baremetal_deploy_templates as t').selectAll('t'), page).execute();
}

export async function insertDeployTemplate(tx: Tx, values: Insertable<BaremetalDeployTemplateTable>): Promise<void> {
  await tx.db.insertInto('baremetal_deploy_templates').values(values).execute();
}

export async function updateDeployTemplate(tx: Tx, id: number, changes: Updateable<BaremetalDeployTemplateTable>): Promise<void> {
  await tx.db.updateTable('baremetal_deploy_templates').set(changes).where('id', '=', id).execute();
}

export async function deleteDeployTemplateRow(tx: Tx, id: number): Promise<void> {
  await tx.db.deleteFrom('baremetal_deploy_templates').where('id', '=', id).execute();
}
