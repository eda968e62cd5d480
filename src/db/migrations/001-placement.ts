// Placement: providers, their inventories, traits and aggregates; consumers and their allocations.
import type { Kysely } from 'kysely';
import { type MigrationDialect, idColumn, timestamps } from './helpers.js';

export async function up(db: Kysely<any>, dialect: MigrationDialect): Promise<void> {
  await idColumn(db.schema.createTable('resource_classes'), dialect)
    .addColumn('name', 'varchar(255)', (c) => c.notNull().unique())
    .addColumn('is_standard', 'integer', (c) => c.notNull().defaultTo(0))
    .$call(timestamps)
    .execute();

  await idColumn(db.schema.createTable('traits'), dialect)
    .addColumn('name', 'varchar(255)', (c) => c.notNull().unique())
    .addColumn('is_standard', 'integer', (c) => c.notNull().defaultTo(0))
    .$call(timestamps)
    .execute();

  await idColumn(db.schema.createTable('resource_providers'), dialect)
    .addColumn('uuid', 'varchar(36)', (c) => c.notNull().unique())
    .addColumn('name', 'varchar(200)', (c) => c.notNull().unique())
    .addColumn('generation', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('parent_provider_id', 'integer', (c) => c.references('resource_providers.id'))
    .addColumn('root_provider_id', 'integer', (c) => c.references('resource_providers.id'))
    .$call(timestamps)
    .execute();
  await db.schema.createIndex('resource_providers_parent').on('resource_providers').column('parent_provider_id').execute();
  await db.schema.createIndex('resource_providers_root').on('resource_providers').column('root_provider_id').execute();

  await idColumn(db.schema.createTable('inventories'), dialect)
    .addColumn('resource_provider_id', 'integer', (c) => c.notNull().references('resource_providers.id').onDelete('cascade'))
    .addColumn('resource_class_id', 'integer', (c) => c.notNull().references('resource_classes.id'))
    .addColumn('total', 'integer', (c) => c.notNull())
    .addColumn('reserved', 'integer', (c) => c.notNull())
    .addColumn('min_unit', 'integer', (c) => c.notNull())
    .addColumn('max_unit', 'integer', (c) => c.notNull())
    .addColumn('step_size', 'integer', (c) => c.notNull())
    .addColumn('allocation_ratio', 'double precision', (c) => c.notNull())
    // SUM(allocations.used) for this provider and class, kept by every allocation write so a
    // capacity check reads one row instead of summing a provider's allocations.
    .addColumn('used', 'integer', (c) => c.notNull().defaultTo(0))
    .$call(timestamps)
    .addUniqueConstraint('inventories_provider_class', ['resource_provider_id', 'resource_class_id'])
    .execute();
  await db.schema.createIndex('inventories_class').on('inventories').column('resource_class_id').execute();

  await db.schema
    .createTable('resource_provider_traits')
    .addColumn('resource_provider_id', 'integer', (c) => c.notNull().references('resource_providers.id').onDelete('cascade'))
    .addColumn('trait_id', 'integer', (c) => c.notNull().references('traits.id'))
    .addPrimaryKeyConstraint('resource_provider_traits_pk', ['resource_provider_id', 'trait_id'])
    .execute();
  await db.schema.createIndex('resource_provider_traits_trait').on('resource_provider_traits').column('trait_id').execute();

  await idColumn(db.schema.createTable('aggregates'), dialect)
    .addColumn('uuid', 'varchar(36)', (c) => c.notNull().unique())
    .execute();

  await db.schema
    .createTable('resource_provider_aggregates')
    .addColumn('resource_provider_id', 'integer', (c) => c.notNull().references('resource_providers.id').onDelete('cascade'))
    .addColumn('aggregate_id', 'integer', (c) => c.notNull().references('aggregates.id'))
    .addPrimaryKeyConstraint('resource_provider_aggregates_pk', ['resource_provider_id', 'aggregate_id'])
    .execute();
  await db.schema.createIndex('resource_provider_aggregates_aggregate').on('resource_provider_aggregates').column('aggregate_id').execute();

  await idColumn(db.schema.createTable('consumer_types'), dialect)
    .addColumn('name', 'varchar(255)', (c) => c.notNull().unique())
    .$call(timestamps)
    .execute();

  await idColumn(db.schema.createTable('consumers'), dialect)
    .addColumn('uuid', 'varchar(36)', (c) => c.notNull().unique())
    .addColumn('project_id', 'varchar(255)', (c) => c.notNull())
    .addColumn('user_id', 'varchar(255)', (c) => c.notNull())
    .addColumn('generation', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('consumer_type_id', 'integer', (c) => c.references('consumer_types.id'))
    .$call(timestamps)
    .execute();
  await db.schema.createIndex('consumers_project_user').on('consumers').columns(['project_id', 'user_id']).execute();

  await idColumn(db.schema.createTable('allocations'), dialect)
    .addColumn('resource_provider_id', 'integer', (c) => c.notNull().references('resource_providers.id'))
    .addColumn('consumer_id', 'integer', (c) => c.notNull().references('consumers.id'))
    .addColumn('resource_class_id', 'integer', (c) => c.notNull().references('resource_classes.id'))
    .addColumn('used', 'integer', (c) => c.notNull())
    .$call(timestamps)
    .execute();
  await db.schema.createIndex('allocations_provider_class').on('allocations').columns(['resource_provider_id', 'resource_class_id']).execute();
  await db.schema.createIndex('allocations_consumer').on('allocations').column('consumer_id').execute();
  await db.schema.createIndex('allocations_class').on('allocations').column('resource_class_id').execute();
}
