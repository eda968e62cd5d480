// Identifier pools: pools, their free spans (the bookkeeping that keeps "next free" independent of
// how many values are taken), allocations; allocation specs, service instances, the holdings of
// instances in external inventories, and the outbox of deallocations still to deliver to them.
import { type Kysely, sql } from 'kysely';
import { type MigrationDialect, idColumn, timestamps } from './helpers.js';

export async function up(db: Kysely<any>, dialect: MigrationDialect): Promise<void> {
  // Keys are fixed-width hex; "C" collation makes PostgreSQL compare them byte-wise, as SQLite does.
  const key = dialect === 'postgres' ? sql`varchar(32) collate "C"` : sql`varchar(32)`;

  await idColumn(db.schema.createTable('ids_pools'), dialect)
    .addColumn('name', 'varchar(100)', (c) => c.notNull().unique())
    .addColumn('kind', 'varchar(16)', (c) => c.notNull())
    .addColumn('definition', 'text', (c) => c.notNull())
    .addColumn('strategy', 'varchar(32)', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('metadata', 'text', (c) => c.notNull())
    .addColumn('generation', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('total_count', 'varchar(40)', (c) => c.notNull())
    .addColumn('used_count', 'varchar(40)', (c) => c.notNull())
    .addColumn('allocation_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_key', key)
    .$call(timestamps)
    .execute();

  await db.schema
    .createTable('ids_free_ranges')
    .addColumn('pool_id', 'integer', (c) => c.notNull().references('ids_pools.id').onDelete('cascade'))
    .addColumn('band', 'varchar(8)', (c) => c.notNull())
    .addColumn('first_key', key, (c) => c.notNull())
    .addColumn('last_key', key, (c) => c.notNull())
    .addColumn('size_key', key, (c) => c.notNull())
    .addColumn('aligned', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('ids_free_ranges_pk', ['pool_id', 'band', 'first_key'])
    .execute();
  await db.schema.createIndex('ids_free_ranges_aligned').on('ids_free_ranges').columns(['pool_id', 'band', 'aligned', 'first_key']).execute();
  await db.schema.createIndex('ids_free_ranges_size').on('ids_free_ranges').columns(['pool_id', 'band', 'size_key']).execute();

  await db.schema
    .createTable('ids_allocations')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('pool_id', 'integer', (c) => c.notNull().references('ids_pools.id').onDelete('cascade'))
    .addColumn('first_key', key, (c) => c.notNull())
    .addColumn('last_key', key, (c) => c.notNull())
    .addColumn('block_log2', 'integer', (c) => c.notNull())
    .addColumn('owner', 'varchar(255)', (c) => c.notNull())
    .addColumn('purpose', 'varchar(255)', (c) => c.notNull())
    .addColumn('state', 'varchar(16)', (c) => c.notNull())
    .addColumn('expires_at', 'varchar(32)')
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('source', 'varchar(32)', (c) => c.notNull())
    .addColumn('request_hash', 'varchar(64)', (c) => c.notNull())
    .addColumn('metadata', 'text', (c) => c.notNull())
    .$call(timestamps)
    .addUniqueConstraint('ids_allocations_owner', ['pool_id', 'owner', 'purpose'])
    // The last line of defence against handing one value out twice: one allocation per first value.
    .addUniqueConstraint('ids_allocations_value', ['pool_id', 'first_key'])
    .execute();
  // Only reservations have an expiry: partial indexes stay as small as the number of leases.
  await db.schema.createIndex('ids_allocations_expiry').on('ids_allocations').columns(['expires_at']).where(sql.ref('expires_at'), 'is not', null).execute();
  await db.schema
    .createIndex('ids_allocations_pool_expiry')
    .on('ids_allocations')
    .columns(['pool_id', 'expires_at'])
    .where(sql.ref('expires_at'), 'is not', null)
    .execute();
  await db.schema.createIndex('ids_allocations_by_owner').on('ids_allocations').columns(['owner', 'purpose']).execute();

  await idColumn(db.schema.createTable('ids_allocation_specs'), dialect)
    .addColumn('name', 'varchar(100)', (c) => c.notNull().unique())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('attributes', 'text', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .$call(timestamps)
    .execute();

  await db.schema
    .createTable('ids_service_instances')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('service_type', 'varchar(100)', (c) => c.notNull())
    .addColumn('spec_id', 'integer', (c) => c.notNull().references('ids_allocation_specs.id'))
    .addColumn('lifecycle', 'varchar(40)', (c) => c.notNull())
    .addColumn('state', 'varchar(40)', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('candidate', 'text')
    .addColumn('candidate_validated', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('active', 'text')
    .addColumn('rollback', 'text')
    .addColumn('last_error', 'text')
    .addColumn('terminated_at', 'varchar(32)')
    .$call(timestamps)
    .execute();
  await db.schema.createIndex('ids_service_instances_state').on('ids_service_instances').columns(['state']).execute();

  await idColumn(db.schema.createTable('ids_external_holdings'), dialect)
    .addColumn('instance_id', 'varchar(36)', (c) => c.notNull().references('ids_service_instances.id').onDelete('cascade'))
    .addColumn('attribute', 'varchar(255)', (c) => c.notNull())
    .addColumn('inventory', 'varchar(100)', (c) => c.notNull())
    .addColumn('owner_key', 'varchar(255)', (c) => c.notNull())
    .addColumn('value', 'text')
    .$call(timestamps)
    .addUniqueConstraint('ids_external_holdings_owner', ['instance_id', 'attribute', 'owner_key'])
    .execute();

  await idColumn(db.schema.createTable('ids_outbox'), dialect)
    .addColumn('inventory', 'varchar(100)', (c) => c.notNull())
    .addColumn('operation', 'varchar(32)', (c) => c.notNull())
    .addColumn('owner_key', 'varchar(255)', (c) => c.notNull())
    .addColumn('attribute', 'varchar(255)', (c) => c.notNull())
    .addColumn('instance_id', 'varchar(36)')
    .addColumn('value', 'text')
    .addColumn('state', 'varchar(16)', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('claimed_by', 'varchar(255)')
    .addColumn('claimed_until', 'varchar(32)')
    .addColumn('last_error', 'text')
    .addColumn('completed_at', 'varchar(32)')
    .$call(timestamps)
    .execute();
  await db.schema.createIndex('ids_outbox_due').on('ids_outbox').columns(['state', 'next_attempt_at']).execute();
  await db.schema.createIndex('ids_outbox_instance').on('ids_outbox').columns(['instance_id']).execute();
}
