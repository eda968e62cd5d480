#!/usr/bin/python3
"""Placement's request schemas and python-jsonschema's verdicts, for allot to compare with its own.

Prints JSON on stdout: {"schemas": {name: schema}, "cases": [{"schema": name, "instance": ...,
"error": str(ValidationError) or null}]}. scripts/schema-differential.ts reads it, checks that
allot's schemas (src/placement/schemas.ts) are Placement's, key for key and in order, and that
allot's validator picks and words the same error for every case.

Needs Debian's python3-placement (its schemas and its uuid format checker). Usage:
    /usr/bin/python3 scripts/schema-differential.py [--cases N] [--seed S]
"""
import argparse
import json
import random
import string
import uuid

import jsonschema

from placement import util  # noqa: F401  (registers Placement's 'uuid' format checker)
from placement.schemas import aggregate, allocation, allocation_candidate
from placement.schemas import inventory, reshaper, resource_class
from placement.schemas import resource_provider, trait, usage

SCHEMAS = {
    'providerCreate@1.0': resource_provider.POST_RESOURCE_PROVIDER_SCHEMA,
    'providerCreate@1.14': resource_provider.POST_RP_SCHEMA_V1_14,
    'providerUpdate@1.0': resource_provider.PUT_RESOURCE_PROVIDER_SCHEMA,
    'providerUpdate@1.14': resource_provider.PUT_RP_SCHEMA_V1_14,
    'providerListQuery@1.0': resource_provider.GET_RPS_SCHEMA_1_0,
    'providerListQuery@1.3': resource_provider.GET_RPS_SCHEMA_1_3,
    'providerListQuery@1.4': resource_provider.GET_RPS_SCHEMA_1_4,
    'providerListQuery@1.14': resource_provider.GET_RPS_SCHEMA_1_14,
    'providerListQuery@1.18': resource_provider.GET_RPS_SCHEMA_1_18,
    'inventoryUpdate': inventory.BASE_INVENTORY_SCHEMA,
    'inventoryCreate': inventory.POST_INVENTORY_SCHEMA,
    'inventoriesReplace': inventory.PUT_INVENTORY_SCHEMA,
    'providerTraits': trait.SET_TRAITS_FOR_RP_SCHEMA,
    'traitListQuery': trait.LIST_TRAIT_SCHEMA,
    'customResourceClass': resource_class.POST_RC_SCHEMA_V1_2,
    'providerAggregates@1.1': aggregate.PUT_AGGREGATES_SCHEMA_V1_1,
    'providerAggregates@1.19': aggregate.PUT_AGGREGATES_SCHEMA_V1_19,
    'allocationsPut@1.0': allocation.ALLOCATION_SCHEMA,
    'allocationsPut@1.8': allocation.ALLOCATION_SCHEMA_V1_8,
    'allocationsPut@1.12': allocation.ALLOCATION_SCHEMA_V1_12,
    'allocationsPut@1.28': allocation.ALLOCATION_SCHEMA_V1_28,
    'allocationsPut@1.34': allocation.ALLOCATION_SCHEMA_V1_34,
    'allocationsPut@1.38': allocation.ALLOCATION_SCHEMA_V1_38,
    'allocationsPost@1.13': allocation.POST_ALLOCATIONS_V1_13,
    'allocationsPost@1.28': allocation.POST_ALLOCATIONS_V1_28,
    'allocationsPost@1.34': allocation.POST_ALLOCATIONS_V1_34,
    'allocationsPost@1.38': allocation.POST_ALLOCATIONS_V1_38,
    'reshaper@1.30': reshaper.POST_RESHAPER_SCHEMA,
    'reshaper@1.34': reshaper.POST_RESHAPER_SCHEMA_V1_34,
    'reshaper@1.38': reshaper.POST_RESHAPER_SCHEMA_V1_38,
    'usagesQuery@1.9': usage.GET_USAGES_SCHEMA_1_9,
    'usagesQuery@1.38': usage.GET_USAGES_SCHEMA_V1_38,
    'candidatesQuery@1.10': allocation_candidate.GET_SCHEMA_1_10,
    'candidatesQuery@1.16': allocation_candidate.GET_SCHEMA_1_16,
    'candidatesQuery@1.17': allocation_candidate.GET_SCHEMA_1_17,
    'candidatesQuery@1.21': allocation_candidate.GET_SCHEMA_1_21,
    'candidatesQuery@1.25': allocation_candidate.GET_SCHEMA_1_25,
    'candidatesQuery@1.31': allocation_candidate.GET_SCHEMA_1_31,
    'candidatesQuery@1.33': allocation_candidate.GET_SCHEMA_1_33,
    'candidatesQuery@1.35': allocation_candidate.GET_SCHEMA_1_35,
    'candidatesQuery@1.36': allocation_candidate.GET_SCHEMA_1_36,
}

# Keys a generated object may carry for a patternProperties entry: some match, some do not.
SAMPLE_KEYS = ['VCPU', 'DISK_GB', 'CUSTOM_X', 'bad-class', 'resources', 'resources1',
               'required_a', 'member_of2', 'in_tree', 'resourcesX', '', 'my_group']


def sample_string(rnd):
    return rnd.choice([
        '', 'x', 'CUSTOM_FOO', 'VCPU', 'bad-name', 'a' * 300, "it's", 'isolate',
        'none', 'all', 'unknown', '1', '0', 'not-a-uuid', str(uuid.uuid4()),
        str(uuid.uuid4()).upper(), uuid.uuid4().hex, '{%s}' % uuid.uuid4(),
        ''.join(rnd.choice(string.printable) for _ in range(rnd.randint(0, 12))),
    ])


def wrong_type(rnd):
    return rnd.choice([None, True, 0, -1, 1.5, 2 ** 40, 'text', [], {}, ['a'], {'k': 1}])


def gen(schema, rnd, depth=0):
    """An instance near `schema`: mostly shaped by it, sometimes wrong in one place or another."""
    if rnd.random() < 0.08 or depth > 6:
        return wrong_type(rnd)
    if 'anyOf' in schema:
        return gen(rnd.choice(schema['anyOf']), rnd, depth + 1) if rnd.random() < 0.8 else wrong_type(rnd)
    types = schema.get('type', 'object')
    t = rnd.choice(types) if isinstance(types, list) else types
    if t == 'object':
        out = {}
        for name, sub in schema.get('properties', {}).items():
            if name in schema.get('required', []) or rnd.random() < 0.5:
                if rnd.random() > 0.05:
                    out[name] = gen(sub, rnd, depth + 1)
        for pattern, sub in schema.get('patternProperties', {}).items():
            for _ in range(rnd.randint(0, 2)):
                key = str(uuid.uuid4()) if '0-9a-fA-F' in pattern else rnd.choice(SAMPLE_KEYS)
                out[key] = gen(sub, rnd, depth + 1)
        if rnd.random() < 0.1:
            out[rnd.choice(['bogus', 'extra', 'name'])] = 1
        return out
    if t == 'array':
        item = schema.get('items', {'type': 'string'})
        return [gen(item, rnd, depth + 1) for _ in range(rnd.choice([0, 1, 1, 2, 3]))]
    if t == 'string':
        if 'enum' in schema and rnd.random() < 0.6:
            return rnd.choice(schema['enum'])
        return sample_string(rnd)
    if t == 'integer':
        return rnd.choice([0, 1, 2, 7, -1, 2147483647, 2147483648])
    if t == 'number':
        # (no 1.0: once parsed, JavaScript cannot tell it from 1, and prints it so)
        return rnd.choice([0, 1, 1.5, -2.5, 3.5e38, 16])
    if t == 'null':
        return None
    return wrong_type(rnd)


def main():
    p = argparse.ArgumentParser()
    p.add_argument('--cases', type=int, default=60, help='cases per schema')
    p.add_argument('--seed', type=int, default=1)
    args = p.parse_args()
    rnd = random.Random(args.seed)
    cases = []
    for name, schema in SCHEMAS.items():
        for _ in range(args.cases):
            instance = gen(schema, rnd)
            try:
                jsonschema.validate(instance, schema, format_checker=jsonschema.FormatChecker())
                error = None
            except jsonschema.ValidationError as exc:
                error = str(exc)
            cases.append({'schema': name, 'instance': instance, 'error': error})
    json.dump({'schemas': SCHEMAS, 'cases': cases}, __import__('sys').stdout)


if __name__ == '__main__':
    main()
