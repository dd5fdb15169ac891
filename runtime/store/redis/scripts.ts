import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

/** A Lua script with its SHA-1, run by EVALSHA and loaded by EVAL when the server does not know it yet. */
export interface LuaScript {
  lua: string;
  sha: string;
}

export function script(lua: string): LuaScript {
  return { lua, sha: createHash('sha1').update(lua).digest('hex') };
}

/**
 * One commit, atomically: compare the stored version, check the writer's fencing token, check the events continue
 * the log, append them to the session's stream (entry id = seq), upsert journal entries, write the record, index a
 * new session, keep the set of running sessions, and set or clear the TTL of a finished one. Replies `{1}` on success
 * (also when this very commit was already applied), `{0, version}` on a version conflict, `{2, seq}` when the events
 * do not follow the stored log, `{3, token}` when the writer is fenced off (its token is not the latest lease granted,
 * or it has none while another writer holds the lease). No WATCH: ioredis drops it silently on reconnect, a script
 * cannot be split.
 *
 * The channel messages the events send (`channel.sent`) are appended to their channels' streams in the same write
 * (the outbox: a stored step never lacks its messages, whatever crashes after the commit).
 *
 * KEYS: record hash, event stream, journal hash, index of all sessions, index of the machine's sessions, lease hash,
 *       set of running sessions, then one channel stream per message.
 * ARGV: expected version, new version, sealed record, status, machine id, created at, awaiting approval (0/1),
 *       new seq, finished TTL in seconds (0 = keep), finished (0/1), session id, updated at, fencing token (0 = none),
 *       event count, message count, channel stream length bound, events..., messages..., journal key/value pairs...
 */
export const COMMIT = script(`
local expected = tonumber(ARGV[1])
local current = tonumber(redis.call('HGET', KEYS[1], 'v') or '0')
-- The same commit again (a client resends it after a reconnect lost the first reply): it is already applied.
if current ~= expected and current == tonumber(ARGV[2]) and redis.call('HGET', KEYS[1], 'r') == ARGV[3] then return {1} end
-- Fencing before the version: a holder whose lease was taken over is told so, whatever else changed meanwhile.
local fence = tonumber(ARGV[13])
if fence > 0 then
  local granted = tonumber(redis.call('HGET', KEYS[1], 'f') or '0')
  if fence ~= granted then return {3, granted} end
else
  local leased = redis.call('HGET', KEYS[6], 't')
  if leased then return {3, tonumber(leased)} end
end
if current ~= expected then return {0, current} end
local stored = tonumber(redis.call('HGET', KEYS[1], 'q') or '0')
local count = tonumber(ARGV[14])
local messages = tonumber(ARGV[15])
local seq = tonumber(ARGV[8])
if stored + count ~= seq then return {2, stored} end
for i = 1, count do
  redis.call('XADD', KEYS[2], (stored + i) .. '-0', 'e', ARGV[16 + i])
end
for i = 1, messages do
  redis.call('XADD', KEYS[7 + i], 'MAXLEN', '~', ARGV[16], '*', 'm', ARGV[16 + count + i])
end
for i = 17 + count + messages, #ARGV, 2 do
  redis.call('HSET', KEYS[3], ARGV[i], ARGV[i + 1])
end
redis.call('HSET', KEYS[1], 'v', ARGV[2], 'r', ARGV[3], 'st', ARGV[4], 'm', ARGV[5], 'c', ARGV[6], 'a', ARGV[7], 'q', ARGV[8], 'u', ARGV[12])
if current == 0 then
  redis.call('ZADD', KEYS[4], ARGV[6], ARGV[11])
  redis.call('ZADD', KEYS[5], ARGV[6], ARGV[11])
end
if ARGV[4] == 'running' then
  redis.call('SADD', KEYS[7], ARGV[11])
else
  redis.call('SREM', KEYS[7], ARGV[11])
end
local ttl = tonumber(ARGV[9])
for k = 1, 3 do
  if ARGV[10] == '1' and ttl > 0 then
    redis.call('EXPIRE', KEYS[k], ttl)
  else
    redis.call('PERSIST', KEYS[k])
  end
end
return {1}
`);

/**
 * One page of a session index, newest first, after a position, filtered by status, within a scan budget (a script
 * blocks the server, so it never walks more than the budget). Entries whose record expired are dropped from the
 * index on the way.
 *
 * KEYS: the index (all sessions, or one machine's).
 * ARGV: record key prefix, record key suffix, after score ('+inf' for the first page), after member ('' for none),
 *       limit + 1, scan budget, statuses... (none = any).
 * Reply: { scanned-all (0/1), last scanned score, last scanned member, then per match: id, fields... }.
 */
export const LIST = script(`
local after_score = ARGV[3]
local after_member = ARGV[4]
local want = tonumber(ARGV[5])
local budget = tonumber(ARGV[6])
local statuses = {}
local any = #ARGV < 7
for i = 7, #ARGV do statuses[ARGV[i]] = true end
local out = {}
local found = 0
local scanned = 0
local offset = 0
local last_score, last_member = '', ''
local expired = {}
local done = 0
while true do
  local batch = redis.call('ZREVRANGEBYSCORE', KEYS[1], after_score, '-inf', 'WITHSCORES', 'LIMIT', offset, 200)
  if #batch == 0 then done = 1 break end
  offset = offset + #batch / 2
  for i = 1, #batch, 2 do
    local member, score = batch[i], batch[i + 1]
    local skip = after_member ~= '' and tonumber(score) == tonumber(after_score) and member >= after_member
    if not skip then
      scanned = scanned + 1
      local f = redis.call('HMGET', ARGV[1] .. member .. ARGV[2], 'st', 'm', 'v', 'q', 'c', 'a', 'u')
      if not f[1] then
        table.insert(expired, member)
      elseif any or statuses[f[1]] then
        found = found + 1
        table.insert(out, member)
        for k = 1, 7 do table.insert(out, f[k] or '') end
      end
      last_score, last_member = score, member
      if found >= want or scanned >= budget then break end
    end
  end
  if found >= want or scanned >= budget then break end
end
for _, member in ipairs(expired) do redis.call('ZREM', KEYS[1], member) end
local reply = {done, last_score, last_member}
for _, v in ipairs(out) do table.insert(reply, v) end
return reply
`);

/** Runs a script by its SHA, loading it on the server the first time (or after a SCRIPT FLUSH / restart). */
export async function runScript(
  redis: Redis,
  { lua, sha }: LuaScript,
  keys: readonly string[],
  args: ReadonlyArray<string | number>,
): Promise<unknown> {
  try {
    return await redis.evalsha(sha, keys.length, ...keys, ...args);
  } catch (error) {
    if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
    return await redis.eval(lua, keys.length, ...keys, ...args);
  }
}
