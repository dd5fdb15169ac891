import { script } from './scripts.ts';

/**
 * Takes a session's lease: refused while another owner holds it (reply `{0, ms left, holder}`); refused for a
 * session that is not stored unless `create` (reply `{2}`, nothing written); otherwise a new fencing token, one more
 * than the last granted (kept in the record hash, which outlives every lease), and the lease hash `{o, t}` with the
 * TTL (reply `{1, token}`). A session being created gets its token counter with an expiry its first commit clears,
 * so a creation that never commits leaves nothing behind for long.
 *
 * KEYS: lease hash, record hash. ARGV: owner, TTL ms, create (0/1), expiry ms of a counter without a record.
 */
export const ACQUIRE = script(`
local holder = redis.call('HGET', KEYS[1], 'o')
if holder and holder ~= ARGV[1] then return {0, redis.call('PTTL', KEYS[1]), holder} end
local stored = redis.call('HEXISTS', KEYS[2], 'r') == 1
if not stored and ARGV[3] ~= '1' then return {2} end
local token = redis.call('HINCRBY', KEYS[2], 'f', 1)
if not stored and redis.call('PTTL', KEYS[2]) < 0 then redis.call('PEXPIRE', KEYS[2], ARGV[4]) end
redis.call('HSET', KEYS[1], 'o', ARGV[1], 't', token)
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return {1, token}
`);

/** Extends the lease when this owner still holds it with this token. KEYS: lease hash. ARGV: owner, token, TTL ms. Reply 1 or 0. */
export const RENEW = script(`
if redis.call('HGET', KEYS[1], 'o') == ARGV[1] and redis.call('HGET', KEYS[1], 't') == ARGV[2] then
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  return 1
end
return 0
`);

/** Deletes the lease when it still carries this token. KEYS: lease hash. ARGV: token. */
export const RELEASE = script(`
if redis.call('HGET', KEYS[1], 't') == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1
`);

/**
 * One SSCAN page of the running sessions, keeping those whose lease hash is gone (orphans); members whose record is
 * no longer `running` (or gone) are dropped from the set on the way.
 *
 * KEYS: set of running sessions. ARGV: key prefix up to the hash tag (`<prefix>{`), cursor, SSCAN COUNT.
 * Reply: { next cursor, then per orphan: id, status, machine, version, seq, created at, awaiting (0/1), updated at }.
 */
export const ORPHANS = script(`
local page = redis.call('SSCAN', KEYS[1], ARGV[2], 'COUNT', ARGV[3])
local out = {page[1]}
local stale = {}
for _, member in ipairs(page[2]) do
  local base = ARGV[1] .. member .. '}:'
  local f = redis.call('HMGET', base .. 'r', 'st', 'm', 'v', 'q', 'c', 'a', 'u')
  if f[1] ~= 'running' then
    table.insert(stale, member)
  elseif redis.call('EXISTS', base .. 'lease') == 0 then
    table.insert(out, member)
    for k = 1, 7 do table.insert(out, f[k] or '') end
  end
end
for _, member in ipairs(stale) do redis.call('SREM', KEYS[1], member) end
return out
`);
