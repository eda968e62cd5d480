// A node's VIFs (/v1/nodes/{node}/vifs), recorded on its ports and port groups: list, attach and
// detach, each attach or detach one transaction under the node's row lock.
import { transaction } from '../../db/transaction.js';
import type { Tx } from '../../db/database.js';
import type { BaremetalContext } from '../context.js';
import { baremetalDomainError } from '../core/domain-errors.js';
import { lockNode, nodeNotFound } from '../store/nodes.js';
import { type PortgroupRecord, listPortgroups, listPorts, portNotFound, portgroupNotFound, updatePort, updatePortgroup } from '../store/ports.js';

/**
 * The VIFs attached to a node, as Ironic's port-based network interfaces record them: a port's or
 * port group's `internal_info.tenant_vif_port_id`.
 */
const VIF_KEY = 'tenant_vif_port_id';

const vifOf = (r: { internal_info: string }): string | null =>
  ((JSON.parse(r.internal_info) as Record<string, unknown>)[VIF_KEY] as string | undefined) ?? null;

/** Every port and port group of a node, port groups first, in id order. */
async function portLikeOf(tx: Tx | BaremetalContext['database'], nodeId: number) {
  const all = { limit: 100_000, sortKey: 'id', sortDir: 'asc' } as const;
  const groups = await listPortgroups(tx, { nodeId }, all);
  const ports = await listPorts(tx, { nodeId }, all);
  return { groups, ports };
}

export async function listVifs(ctx: BaremetalContext, nodeId: number): Promise<string[]> {
  const { groups, ports } = await portLikeOf(ctx.database, nodeId);
  return [...groups, ...ports].map(vifOf).filter((v): v is string => v !== null);
}

/**
 * Attach a VIF: recorded on the node's first free port group (one with ports), else its first free
 * PXE-enabled port, else any free port, as Ironic picks them. A VIF already on one of the node's
 * ports is Ironic's 409. A node without a free port takes it unrecorded: its network interface is
 * `noop`, which accepts every VIF (as the reference does).
 */
export async function attachVif(ctx: BaremetalContext, ident: string, vif: string, on: { port?: string; portgroup?: string } = {}): Promise<void> {
  await transaction(ctx.database, async (tx) => {
    const node = await lockNode(tx, ident);
    if (!node) throw nodeNotFound(ident);
    const { groups, ports } = await portLikeOf(tx, node.id);
    const holder = [...groups, ...ports].find((r) => vifOf(r) === vif);
    if (holder) {
      const kind = groups.includes(holder as PortgroupRecord) ? 'Portgroup' : 'Port';
      throw baremetalDomainError('vif_already_attached', { vif, kind, uuid: holder.uuid }, `VIF ${vif} is on ${kind} ${holder.uuid}`);
    }
    const record = (r: { internal_info: string }) => JSON.stringify({ ...JSON.parse(r.internal_info), [VIF_KEY]: vif });
    // 1.67: the port or port group asked for, which must be the node's and free
    const asked = on.port ?? on.portgroup;
    if (asked !== undefined) {
      const target = (on.port ? ports : groups).find((r) => r.uuid === asked || ('name' in r && r.name === asked));
      if (!target) throw (on.port ? portNotFound : portgroupNotFound)(asked);
      if (vifOf(target) !== null) throw baremetalDomainError('vif_no_free_port', { vif }, `${asked} has a VIF`);
      const changes = { internal_info: record(target), updated_at: tx.clock.nowIso() };
      return on.port ? updatePort(tx, target.id, changes) : updatePortgroup(tx, target.id, changes);
    }
    const group = groups.find((g) => vifOf(g) === null && ports.some((p) => p.portgroup_id === g.id));
    if (group) return updatePortgroup(tx, group.id, { internal_info: record(group), updated_at: tx.clock.nowIso() });
    const free = ports.filter((p) => p.portgroup_id === null && vifOf(p) === null);
    const port = free.find((p) => p.pxe_enabled === 1) ?? free[0];
    if (port) await updatePort(tx, port.id, { internal_info: record(port), updated_at: tx.clock.nowIso() });
  });
}

/** Detach a VIF: the port or port group holding it forgets it (an unrecorded one: nothing to do, as `noop`). */
export async function detachVif(ctx: BaremetalContext, ident: string, vif: string): Promise<void> {
  await transaction(ctx.database, async (tx) => {
    const node = await lockNode(tx, ident);
    if (!node) throw nodeNotFound(ident);
    const { groups, ports } = await portLikeOf(tx, node.id);
    const forget = (r: { internal_info: string }) => {
      const info = JSON.parse(r.internal_info) as Record<string, unknown>;
      delete info[VIF_KEY];
      return { internal_info: JSON.stringify(info), updated_at: tx.clock.nowIso() };
    };
    for (const g of groups) if (vifOf(g) === vif) await updatePortgroup(tx, g.id, forget(g));
    for (const p of ports) if (vifOf(p) === vif) await updatePort(tx, p.id, forget(p));
  });
}
