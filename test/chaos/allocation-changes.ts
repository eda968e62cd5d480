// Which allot process wrote each change of a bare-metal allocation, as PostgreSQL itself records it.
// The API never shows an allocation's conductor, and a snapshot only its latest one: neither can
// tell that a process finished an allocation another conductor had taken over from it. So the
// harness installs, once allot has made its schema, a trigger on `baremetal_allocations` that logs
// every row change in the same transaction — committed exactly when the change is — with the
// writer's address (each allot process has its own, in its own network namespace), the states and
// conductors before and after, and a sequence number: two changes of one row are numbered in the
// order they happened (the second waits for the first's row lock, so it draws the later number).
// White-box on purpose, like the snapshots; the log lives in a schema of its own (`chaos`) that
// allot never reads. The same for the nodes' locks: a trigger on `baremetal_nodes` logs every
// change of a node's lock (`reservation`) or of the states a transition under it changes (power,
// provision, their targets), with its writer, for the node-lock fencing rule.
import pg from 'pg';
import type { AllocationChange, AllocationRow, NodeLockChange, NodeLockRow } from './history.js';

const INSTALL = `
  create schema if not exists chaos;
  create table if not exists chaos.allocation_changes (
    seq bigserial primary key,
    at timestamptz not null default clock_timestamp(),
    writer inet,
    op text not null,
    uuid text not null,
    resource_class text,
    old_state text,
    new_state text,
    old_conductor text,
    new_conductor text,
    old_node bigint,
    new_node bigint,
    old_error text,
    new_error text
  );
  create or replace function chaos.log_allocation_change() returns trigger language plpgsql as $$
  begin
    if tg_op = 'INSERT' then
      insert into chaos.allocation_changes (writer, op, uuid, resource_class, new_state, new_conductor, new_node, new_error)
      values (inet_client_addr(), tg_op, new.uuid, new.resource_class, new.state, new.conductor_affinity, new.node_id, new.last_error);
    elsif tg_op = 'UPDATE' then
      insert into chaos.allocation_changes
        (writer, op, uuid, resource_class, old_state, new_state, old_conductor, new_conductor, old_node, new_node, old_error, new_error)
      values (inet_client_addr(), tg_op, new.uuid, new.resource_class, old.state, new.state,
              old.conductor_affinity, new.conductor_affinity, old.node_id, new.node_id, old.last_error, new.last_error);
    else
      insert into chaos.allocation_changes (writer, op, uuid, resource_class, old_state, old_conductor, old_node, old_error)
      values (inet_client_addr(), tg_op, old.uuid, old.resource_class, old.state, old.conductor_affinity, old.node_id, old.last_error);
    end if;
    return null;
  end $$;
  drop trigger if exists chaos_allocation_changes on baremetal_allocations;
  create trigger chaos_allocation_changes after insert or update or delete on baremetal_allocations
    for each row execute function chaos.log_allocation_change();

  create table if not exists chaos.node_lock_changes (
    seq bigserial primary key,
    at timestamptz not null default clock_timestamp(),
    writer inet,
    uuid text not null,
    old_reservation text, new_reservation text,
    old_power text, new_power text,
    old_target_power text, new_target_power text,
    old_provision text, new_provision text,
    old_target_provision text, new_target_provision text
  );
  create or replace function chaos.log_node_lock_change() returns trigger language plpgsql as $$
  begin
    insert into chaos.node_lock_changes (writer, uuid, old_reservation, new_reservation, old_power, new_power,
      old_target_power, new_target_power, old_provision, new_provision, old_target_provision, new_target_provision)
    values (inet_client_addr(), new.uuid, old.reservation, new.reservation, old.power_state, new.power_state,
      old.target_power_state, new.target_power_state, old.provision_state, new.provision_state,
      old.target_provision_state, new.target_provision_state);
    return null;
  end $$;
  drop trigger if exists chaos_node_lock_changes on baremetal_nodes;
  create trigger chaos_node_lock_changes after update on baremetal_nodes
    for each row
    when (old.reservation is distinct from new.reservation
       or old.power_state is distinct from new.power_state
       or old.target_power_state is distinct from new.target_power_state
       or old.provision_state is distinct from new.provision_state
       or old.target_provision_state is distinct from new.target_provision_state)
    execute function chaos.log_node_lock_change();
`;

const row = (state: string, conductor: string | null, node: string | null, error: string | null): AllocationRow => ({
  state,
  conductor,
  node: node === null ? null : Number(node),
  error,
});

/** Install the change log (allot's schema must exist: after the first process has started). */
export async function installAllocationChanges(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  await client.connect();
  try {
    await client.query(INSTALL);
  } finally {
    await client.end();
  }
}

/**
 * Every change of an allocation of `resourceClass`, in the order they happened, each writer named
 * by the conductor whose process has that address (`conductors`: address → conductor id); a writer
 * that is no allot process (none should be) keeps its address.
 */
export async function readAllocationChanges(url: string, resourceClass: string, conductors: Record<string, string>): Promise<AllocationChange[]> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000, query_timeout: 30_000 });
  await client.connect();
  try {
    const { rows } = await client.query(
      `select seq, host(writer) as writer, op, uuid, old_state, new_state, old_conductor, new_conductor, old_node, new_node, old_error, new_error
         from chaos.allocation_changes where resource_class = $1 order by seq`,
      [resourceClass],
    );
    return rows.map((r) => ({
      seq: Number(r.seq),
      writer: r.writer === null ? null : (conductors[r.writer] ?? r.writer),
      op: r.op,
      uuid: r.uuid,
      before: r.op === 'INSERT' ? null : row(r.old_state, r.old_conductor, r.old_node, r.old_error),
      after: r.op === 'DELETE' ? null : row(r.new_state, r.new_conductor, r.new_node, r.new_error),
    }));
  } finally {
    await client.end();
  }
}

/** Every change of the lock or states of the nodes `nodes` (uuids), in the order they happened, each writer named as in readAllocationChanges. */
export async function readNodeLockChanges(url: string, nodes: string[], conductors: Record<string, string>): Promise<NodeLockChange[]> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000, query_timeout: 30_000 });
  await client.connect();
  try {
    const { rows } = await client.query('select *, host(writer) as writer_host from chaos.node_lock_changes where uuid = any($1) order by seq', [nodes]);
    const lockRow = (r: Record<string, string | null>, side: 'old' | 'new'): NodeLockRow => ({
      reservation: r[`${side}_reservation`] ?? null,
      power: r[`${side}_power`] ?? null,
      targetPower: r[`${side}_target_power`] ?? null,
      provision: r[`${side}_provision`] ?? '',
      targetProvision: r[`${side}_target_provision`] ?? null,
    });
    return rows.map((r) => ({
      seq: Number(r.seq),
      writer: r.writer_host === null ? null : (conductors[r.writer_host] ?? r.writer_host),
      node: r.uuid,
      before: lockRow(r, 'old'),
      after: lockRow(r, 'new'),
    }));
  } finally {
    await client.end();
  }
}
