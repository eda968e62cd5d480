// Bare metal (the Ironic-compatible API): nodes and their traits, allocations and their requested
// traits, and the conductors (allot processes) that work the allocations.
// `updated_at` may be null: Ironic reports it as null until the first change.
import type { Kysely } from 'kysely';
import { type MigrationDialect, idColumn } from './helpers.js';

export async function up(db: Kysely<any>, dialect: MigrationDialect): Promise<void> {
  await idColumn(db.schema.createTable('baremetal_conductors'), dialect)
    .addColumn('hostname', 'varchar(255)', (c) => c.notNull().unique())
    .addColumn('online', 'integer', (c) => c.notNull())
    .addColumn('heartbeat_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('updated_at', 'varchar(32)')
    .execute();

  await idColumn(db.schema.createTable('baremetal_nodes'), dialect)
    .addColumn('uuid', 'varchar(36)', (c) => c.notNull().unique())
    .addColumn('name', 'varchar(255)', (c) => c.unique())
    .addColumn('driver', 'varchar(255)', (c) => c.notNull())
    .addColumn('resource_class', 'varchar(80)')
    .addColumn('provision_state', 'varchar(15)', (c) => c.notNull())
    .addColumn('target_provision_state', 'varchar(15)')
    .addColumn('provision_updated_at', 'varchar(32)')
    .addColumn('power_state', 'varchar(15)')
    .addColumn('target_power_state', 'varchar(15)')
    .addColumn('maintenance', 'integer', (c) => c.notNull())
    .addColumn('maintenance_reason', 'text')
    .addColumn('fault', 'varchar(255)')
    .addColumn('instance_uuid', 'varchar(36)', (c) => c.unique())
    .addColumn('allocation_id', 'integer', (c) => c.unique())
    .addColumn('reservation', 'varchar(255)')
    .addColumn('last_error', 'text')
    .addColumn('owner', 'varchar(255)')
    .addColumn('lessee', 'varchar(255)')
    .addColumn('description', 'text')
    .addColumn('conductor_group', 'varchar(255)', (c) => c.notNull())
    .addColumn('automated_clean', 'integer')
    .addColumn('protected', 'integer', (c) => c.notNull())
    .addColumn('protected_reason', 'text')
    .addColumn('retired', 'integer', (c) => c.notNull())
    .addColumn('retired_reason', 'text')
    .addColumn('shard', 'varchar(255)')
    // JSON documents, stored as text (portable between the dialects)
    .addColumn('instance_info', 'text', (c) => c.notNull())
    .addColumn('properties', 'text', (c) => c.notNull())
    .addColumn('extra', 'text', (c) => c.notNull())
    .addColumn('driver_info', 'text', (c) => c.notNull())
    .addColumn('network_data', 'text', (c) => c.notNull())
    .addColumn('interfaces', 'text', (c) => c.notNull())
    .addColumn('inspection_started_at', 'varchar(32)')
    .addColumn('inspection_finished_at', 'varchar(32)')
    .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('updated_at', 'varchar(32)')
    .execute();
  // the allocation candidate search
  await db.schema.createIndex('baremetal_nodes_candidates').on('baremetal_nodes').columns(['provision_state', 'resource_class']).execute();
  await db.schema.createIndex('baremetal_nodes_reservation').on('baremetal_nodes').column('reservation').execute();

  await db.schema
    .createTable('baremetal_node_traits')
    .addColumn('node_id', 'integer', (c) => c.notNull().references('baremetal_nodes.id').onDelete('cascade'))
    .addColumn('trait', 'varchar(255)', (c) => c.notNull())
    .addPrimaryKeyConstraint('baremetal_node_traits_pk', ['node_id', 'trait'])
    .execute();
  await db.schema.createIndex('baremetal_node_traits_trait').on('baremetal_node_traits').column('trait').execute();

  await idColumn(db.schema.createTable('baremetal_allocations'), dialect)
    .addColumn('uuid', 'varchar(36)', (c) => c.notNull().unique())
    .addColumn('name', 'varchar(255)', (c) => c.unique())
    .addColumn('node_id', 'integer', (c) => c.unique().references('baremetal_nodes.id'))
    .addColumn('resource_class', 'varchar(80)')
    .addColumn('state', 'varchar(15)', (c) => c.notNull())
    .addColumn('last_error', 'text')
    .addColumn('conductor_affinity', 'varchar(255)')
    .addColumn('candidate_nodes', 'text', (c) => c.notNull())
    .addColumn('extra', 'text', (c) => c.notNull())
    .addColumn('owner', 'varchar(255)')
    .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('updated_at', 'varchar(32)')
    .execute();
  await db.schema.createIndex('baremetal_allocations_work').on('baremetal_allocations').columns(['state', 'conductor_affinity']).execute();

  await db.schema
    .createTable('baremetal_allocation_traits')
    .addColumn('allocation_id', 'integer', (c) => c.notNull().references('baremetal_allocations.id').onDelete('cascade'))
    .addColumn('trait', 'varchar(255)', (c) => c.notNull())
    .addPrimaryKeyConstraint('baremetal_allocation_traits_pk', ['allocation_id', 'trait'])
    .execute();
}
