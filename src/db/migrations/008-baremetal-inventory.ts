// The rest of the bare-metal inventory (issue 14): chassis (and a node's chassis), port groups and
// ports, volume connectors and targets, deploy templates, and what fake hardware records of a node (its console switch and RAID
// configurations).
// Ports and port groups belong to a node; the services delete them with it.
import type { Kysely } from 'kysely';
import { type MigrationDialect, idColumn } from './helpers.js';

export async function up(db: Kysely<any>, dialect: MigrationDialect): Promise<void> {
  await idColumn(db.schema.createTable('baremetal_chassis'), dialect)
    .addColumn('uuid', 'varchar(36)', (c) => c.notNull().unique())
    .addColumn('description', 'varchar(255)')
    .addColumn('extra', 'text', (c) => c.notNull())
    .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('updated_at', 'varchar(32)')
    .execute();

  await db.schema
    .alterTable('baremetal_nodes')
    .addColumn('chassis_id', 'integer', (c) => c.references('baremetal_chassis.id'))
    .execute();
  await db.schema.createIndex('baremetal_nodes_chassis').on('baremetal_nodes').column('chassis_id').execute();
  // what fake hardware records: the console switch, the RAID configurations (JSON)
  await db.schema
    .alterTable('baremetal_nodes')
    .addColumn('console_enabled', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('baremetal_nodes')
    .addColumn('raid_config', 'text', (c) => c.notNull().defaultTo('{}'))
    .execute();
  await db.schema
    .alterTable('baremetal_nodes')
    .addColumn('target_raid_config', 'text', (c) => c.notNull().defaultTo('{}'))
    .execute();

  await idColumn(db.schema.createTable('baremetal_portgroups'), dialect)
    .addColumn('uuid', 'varchar(36)', (c) => c.notNull().unique())
    .addColumn('name', 'varchar(255)', (c) => c.unique())
    .addColumn('node_id', 'integer', (c) => c.notNull().references('baremetal_nodes.id'))
    .addColumn('address', 'varchar(18)', (c) => c.unique())
    .addColumn('mode', 'varchar(255)', (c) => c.notNull())
    .addColumn('standalone_ports_supported', 'integer', (c) => c.notNull())
    .addColumn('properties', 'text', (c) => c.notNull())
    .addColumn('internal_info', 'text', (c) => c.notNull())
    .addColumn('extra', 'text', (c) => c.notNull())
    .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('updated_at', 'varchar(32)')
    .execute();
  await db.schema.createIndex('baremetal_portgroups_node').on('baremetal_portgroups').column('node_id').execute();

  await idColumn(db.schema.createTable('baremetal_ports'), dialect)
    .addColumn('uuid', 'varchar(36)', (c) => c.notNull().unique())
    .addColumn('address', 'varchar(18)', (c) => c.notNull().unique())
    .addColumn('node_id', 'integer', (c) => c.notNull().references('baremetal_nodes.id'))
    .addColumn('portgroup_id', 'integer', (c) => c.references('baremetal_portgroups.id'))
    .addColumn('local_link_connection', 'text', (c) => c.notNull())
    .addColumn('pxe_enabled', 'integer', (c) => c.notNull())
    .addColumn('physical_network', 'varchar(64)')
    .addColumn('is_smartnic', 'integer', (c) => c.notNull())
    .addColumn('internal_info', 'text', (c) => c.notNull())
    .addColumn('extra', 'text', (c) => c.notNull())
    .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('updated_at', 'varchar(32)')
    .execute();
  await db.schema.createIndex('baremetal_ports_node').on('baremetal_ports').column('node_id').execute();
  await db.schema.createIndex('baremetal_ports_portgroup').on('baremetal_ports').column('portgroup_id').execute();

  await idColumn(db.schema.createTable('baremetal_deploy_templates'), dialect)
    .addColumn('uuid', 'varchar(36)', (c) => c.notNull().unique())
    .addColumn('name', 'varchar(255)', (c) => c.notNull().unique())
    // the deploy steps, in the order given (JSON)
    .addColumn('steps', 'text', (c) => c.notNull())
    .addColumn('extra', 'text', (c) => c.notNull())
    .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('updated_at', 'varchar(32)')
    .execute();

  await idColumn(db.schema.createTable('baremetal_volume_connectors'), dialect)
    .addColumn('uuid', 'varchar(36)', (c) => c.notNull().unique())
    .addColumn('node_id', 'integer', (c) => c.notNull().references('baremetal_nodes.id'))
    .addColumn('type', 'varchar(32)', (c) => c.notNull())
    .addColumn('connector_id', 'varchar(255)', (c) => c.notNull())
    .addColumn('extra', 'text', (c) => c.notNull())
    .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('updated_at', 'varchar(32)')
    .addUniqueConstraint('baremetal_volume_connectors_type_id', ['type', 'connector_id'])
    .execute();
  await db.schema.createIndex('baremetal_volume_connectors_node').on('baremetal_volume_connectors').column('node_id').execute();

  await idColumn(db.schema.createTable('baremetal_volume_targets'), dialect)
    .addColumn('uuid', 'varchar(36)', (c) => c.notNull().unique())
    .addColumn('node_id', 'integer', (c) => c.notNull().references('baremetal_nodes.id'))
    .addColumn('volume_type', 'varchar(64)', (c) => c.notNull())
    .addColumn('properties', 'text', (c) => c.notNull())
    .addColumn('boot_index', 'integer', (c) => c.notNull())
    .addColumn('volume_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('extra', 'text', (c) => c.notNull())
    .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('updated_at', 'varchar(32)')
    .addUniqueConstraint('baremetal_volume_targets_boot_index', ['node_id', 'boot_index'])
    .execute();
}
