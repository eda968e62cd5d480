// PostgreSQL: an automatic allocation's blocks chosen where the pool's lock is held (issue 32).
//
// The one-statement claim (ids/store/one-statement-allocate.ts) chose its blocks in JS from a
// probe read without the lock and took them with a compare-and-set on the probed span: a
// statement's snapshot predates the lock it waits for, so it could only take what the probe had
// seen. With 48 clients over 3 processes every process's batch chose the same run of blocks
// (lowest, highest, next_after_last), all but one lost, and each loser read the pool, probed and
// wrote again. `allot_take_auto` locks the pool's row first; in READ COMMITTED every later query
// of a VOLATILE function runs on a fresh snapshot, taken after the lock was granted, so it sees
// every change the previous holder committed, and the strategy's pick cannot lose. One statement,
// one round trip, nothing held across round trips.
//
// Values are 32-digit hex keys (ids/core/values.ts keyOf); the pick's arithmetic runs on numeric
// (exact, 128 bits for IPv6): `allot_key_value` and `allot_value_key` convert, `allot_max_aligned`
// is ids/core/ranges.ts maxAlignedLog2.
import { type Kysely, sql } from 'kysely';
import type { MigrationDialect } from './helpers.js';

export async function up(db: Kysely<any>, dialect: MigrationDialect): Promise<void> {
  if (dialect !== 'postgres') return;
  // 2^96, 2^64, 2^32: a key is four 8-digit words
  await sql`
    create or replace function allot_key_value(k text) returns numeric
    language sql immutable parallel safe as $$
      select ('x' || substr(k, 1, 8))::bit(32)::bigint::numeric * 79228162514264337593543950336
        + ('x' || substr(k, 9, 8))::bit(32)::bigint::numeric * 18446744073709551616
        + ('x' || substr(k, 17, 8))::bit(32)::bigint::numeric * 4294967296
        + ('x' || substr(k, 25, 8))::bit(32)::bigint::numeric
    $$`.execute(db);
  // width 32: a value's key; 33: a size's (sizeKeyOf: up to 2^128)
  await sql`
    create or replace function allot_value_key(v numeric, width integer) returns text
    language sql immutable parallel safe as $$
      select right(
        to_hex(div(v, 340282366920938463463374607431768211456)::bigint)
        || lpad(to_hex(mod(div(v, 79228162514264337593543950336), 4294967296)::bigint), 8, '0')
        || lpad(to_hex(mod(div(v, 18446744073709551616), 4294967296)::bigint), 8, '0')
        || lpad(to_hex(mod(div(v, 4294967296), 4294967296)::bigint), 8, '0')
        || lpad(to_hex(mod(v, 4294967296)::bigint), 8, '0'), width)
    $$`.execute(db);
  await sql`
    create or replace function allot_max_aligned(first numeric, last numeric) returns integer
    language plpgsql immutable parallel safe as $$
    declare
      size numeric := last - first + 1;
      k integer := greatest(floor(log(2::numeric, size))::integer - 1, 0);
      b numeric;
    begin
      while power(2::numeric, k + 1) <= size loop k := k + 1; end loop;
      while k > 0 loop
        b := power(2::numeric, k);
        if div(first + b - 1, b) * b + b - 1 <= last then return k; end if;
        k := k - 1;
      end loop;
      return 0;
    end
    $$`.execute(db);
  await createTakeAuto(db);
}

/**
 * `allot_take_auto` as it is defined now: this migration makes it, and a later one that changes
 * it makes it again (017) in databases migrated before the change.
 */
export async function createTakeAuto(db: Kysely<any>): Promise<void> {
  await sql`
    create or replace function allot_take_auto(
      p_pool integer, p_definition text, p_pool_strategy text, p_project text, p_strategy text, p_k integer, p_max_k integer,
      p_owners text[], p_purposes text[], p_ids text[], p_states text[], p_expires text[],
      p_sources text[], p_hashes text[], p_metadata text[], p_now text)
    returns table(o_index integer, o_id text, o_first text, o_last text, o_held boolean)
    language plpgsql volatile as $$
    declare
      v_last_key text;
      v_block numeric := round(power(2::numeric, p_k)); -- scale 0: used_count is written as an integer
      v_want integer[] := '{}';
      v_firsts numeric[] := '{}';
      v_left integer;
      v_cursor text;
      v_from numeric;
      v_bound numeric;
      v_wrapped boolean := false;
      v_holding boolean := false;
      v_span record;
      v_first numeric;
      v_last numeric;
      v_start numeric;
      v_count integer;
      v_run_first numeric;
      v_run_last numeric;
      v_taken integer;
      r record;
    begin
      select p.last_key into v_last_key from ids_pools p
      where p.id = p_pool and p.definition = p_definition and p.strategy = p_pool_strategy and p.project_id is not distinct from p_project
      for update;
      perform allot_assert(found, 'identifier pool changed');
      -- from here on every query reads a snapshot taken after the lock was granted
      -- leases past due are released first, by the locked path
      -- (asked as the pool's earliest lease: see ids/store/pools.ts leasesPastDue)
      perform allot_assert(coalesce((select min(a.expires_at) from ids_allocations a where a.pool_id = p_pool and a.expires_at is not null) > p_now, true),
        'identifier pool holds leases past due');

      -- what each owner+purpose holds already (an idempotent repeat, or a mismatch: the caller tells)
      for r in
        select h.i::integer as idx,
          (select a.id from ids_allocations a where a.pool_id = p_pool and a.owner = h.owner and a.purpose = h.purpose) as held_id
        from unnest(p_owners, p_purposes) with ordinality as h(owner, purpose, i) order by h.i
      loop
        if r.held_id is not null then
          o_index := r.idx; o_id := r.held_id; o_first := null; o_last := null; o_held := true;
          return next;
        else
          v_want := v_want || r.idx;
        end if;
      end loop;
      v_left := coalesce(array_length(v_want, 1), 0);

      -- the strategy's blocks, in the order it hands them out: walk the spans that can hold one
      -- (lowest and next_after_last upwards from a cursor, exclusive; highest downwards), taking
      -- from each the run of aligned blocks it holds, as many as are wanted
      if p_strategy = 'highest' then v_cursor := 'g'; -- above every key
      elsif p_strategy = 'next_after_last' and v_last_key is not null and v_last_key < 'ffffffffffffffffffffffffffffffff' then
        v_from := allot_key_value(v_last_key) + 1;
        v_cursor := allot_value_key(v_from, 32);
        v_holding := true;
      else v_cursor := '';
      end if;
      while v_left > 0 loop
        v_span := null;
        v_bound := null;
        if v_holding then
          -- next_after_last: first the span holding the value after the last one handed out
          -- (then the spans starting after it)
          v_holding := false;
          select f.first_key, f.last_key into v_span from ids_free_ranges f
          where (f.pool_id, f.band, f.first_key) <= (p_pool, 'auto', v_cursor) and f.pool_id = p_pool and f.band = 'auto'
          order by f.pool_id desc, f.band desc, f.first_key desc limit 1;
          if v_span.first_key is null or allot_key_value(v_span.last_key) < v_from then continue; end if;
          v_bound := v_from;
        elsif p_strategy = 'highest' and p_k = 0 then
          select f.first_key, f.last_key into v_span from ids_free_ranges f
          where (f.pool_id, f.band, f.first_key) < (p_pool, 'auto', v_cursor) and f.pool_id = p_pool and f.band = 'auto'
          order by f.pool_id desc, f.band desc, f.first_key desc limit 1;
        elsif p_strategy = 'highest' then
          select s.first_key, s.last_key into v_span from generate_series(p_k, p_max_k) as c(k)
          cross join lateral (
            select f.first_key, f.last_key from ids_free_ranges f
            where (f.pool_id, f.band, f.aligned, f.first_key) < (p_pool, 'auto', c.k, v_cursor) and f.pool_id = p_pool and f.band = 'auto' and f.aligned = c.k
            order by f.pool_id desc, f.band desc, f.aligned desc, f.first_key desc limit 1) as s
          order by s.first_key desc limit 1;
        elsif p_k = 0 then
          select f.first_key, f.last_key into v_span from ids_free_ranges f
          where (f.pool_id, f.band, f.first_key) > (p_pool, 'auto', v_cursor) and f.pool_id = p_pool and f.band = 'auto'
          order by f.pool_id, f.band, f.first_key limit 1;
        else
          select s.first_key, s.last_key into v_span from generate_series(p_k, p_max_k) as c(k)
          cross join lateral (
            select f.first_key, f.last_key from ids_free_ranges f
            where (f.pool_id, f.band, f.aligned, f.first_key) > (p_pool, 'auto', c.k, v_cursor) and f.pool_id = p_pool and f.band = 'auto' and f.aligned = c.k
            order by f.pool_id, f.band, f.aligned, f.first_key limit 1) as s
          order by s.first_key limit 1;
        end if;
        if v_span.first_key is null then
          if p_strategy = 'next_after_last' and not v_wrapped then
            -- at the top: on from the lowest (what was free above is taken)
            v_wrapped := true;
            v_cursor := '';
            continue;
          end if;
          exit;
        end if;
        -- the walk goes on past this span (what is left of it cannot hold another block); the
        -- span holding next_after_last's value is not on the walk
        if v_bound is null then v_cursor := v_span.first_key; end if;
        v_first := allot_key_value(v_span.first_key);
        v_last := allot_key_value(v_span.last_key);
        if p_strategy = 'highest' then
          v_start := (v_last - v_block + 1) - mod(v_last - v_block + 1, v_block);
          if v_start < v_first then continue; end if;
          v_count := least(v_left, div(v_start - div(v_first + v_block - 1, v_block) * v_block, v_block) + 1);
          for j in 0 .. v_count - 1 loop v_firsts := v_firsts || (v_start - j * v_block); end loop;
          v_run_first := v_start - (v_count - 1) * v_block;
          v_run_last := v_start + v_block - 1;
        else
          v_start := div(greatest(v_first, coalesce(v_bound, v_first)) + v_block - 1, v_block) * v_block;
          v_count := least(v_left, div(v_last + 1 - v_start, v_block));
          if v_count <= 0 then continue; end if;
          for j in 0 .. v_count - 1 loop v_firsts := v_firsts || (v_start + j * v_block); end loop;
          v_run_first := v_start;
          v_run_last := v_start + v_count * v_block - 1;
        end if;
        v_left := v_left - v_count::integer;
        -- the span loses the run: it keeps what is left before it (or after it), a new row holds
        -- what is left after it when both are, or it goes
        if v_run_first > v_first then
          update ids_free_ranges set last_key = allot_value_key(v_run_first - 1, 32), size_key = allot_value_key(v_run_first - v_first, 33),
            aligned = allot_max_aligned(v_first, v_run_first - 1)
          where pool_id = p_pool and band = 'auto' and first_key = v_span.first_key;
          if v_run_last < v_last then
            insert into ids_free_ranges (pool_id, band, first_key, last_key, size_key, aligned)
            values (p_pool, 'auto', allot_value_key(v_run_last + 1, 32), v_span.last_key, allot_value_key(v_last - v_run_last, 33),
              allot_max_aligned(v_run_last + 1, v_last));
          end if;
        elsif v_run_last < v_last then
          update ids_free_ranges set first_key = allot_value_key(v_run_last + 1, 32), size_key = allot_value_key(v_last - v_run_last, 33),
            aligned = allot_max_aligned(v_run_last + 1, v_last)
          where pool_id = p_pool and band = 'auto' and first_key = v_span.first_key;
        else
          delete from ids_free_ranges where pool_id = p_pool and band = 'auto' and first_key = v_span.first_key;
        end if;
      end loop;

      v_taken := coalesce(array_length(v_firsts, 1), 0);
      if v_taken = 0 then return; end if;
      -- the unique indexes judge too: an allocation they refuse refuses the whole statement
      return query
        with inserted as (
          insert into ids_allocations (pool_id, version, id, first_key, last_key, block_log2, owner, purpose, state, expires_at,
            source, request_hash, metadata, created_at, updated_at)
          select p_pool, 1, p_ids[x.idx], allot_value_key(x.v, 32), allot_value_key(x.v + v_block - 1, 32), p_k, p_owners[x.idx],
            p_purposes[x.idx], p_states[x.idx], p_expires[x.idx], p_sources[x.idx], p_hashes[x.idx], p_metadata[x.idx], p_now, p_now
          from unnest(v_want[1:v_taken], v_firsts) as x(idx, v)
          on conflict do nothing
          returning id, first_key, last_key)
        select x.idx::integer, i.id::text, i.first_key::text, i.last_key::text, false
        from inserted i join unnest(p_ids) with ordinality as x(id, idx) on x.id = i.id;
      get diagnostics v_count = row_count;
      perform allot_assert(v_count = v_taken, 'identifier claim refused');
      update ids_pools set used_count = (used_count::numeric + v_block * v_taken)::text, allocation_count = allocation_count + v_taken,
        last_key = allot_value_key(v_firsts[v_taken] + v_block - 1, 32), generation = generation + 1, updated_at = p_now
      where id = p_pool;
    end
    $$`.execute(db);
}
