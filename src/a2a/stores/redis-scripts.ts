// The Lua scripts of the Redis state store. Each runs atomically in Redis, so
// a commit (every change staged in one event-loop turn) lands whole, and a
// write for a context whose lease this replica no longer holds is refused in
// the same step as it would have been applied (fencing).
//
// Keys, under the prefix P (ok = "<owner length>:<owner>", unambiguous):
//   P t:<id>               hash o c s m u l n b: owner, context, state, status ms,
//                          updated ms, language, credential names, protobuf body
//   P to:<ok>              zset of the owner's tasks (score status ms, member id)
//   P tc:<ok>:<context>    zset, the same for one context
//   P ts:<ok>:<state>      zset, the same for one state
//   P unfinished           set of SUBMITTED / WORKING task ids
//   P a:<task>, P ao:<task> artifact bodies by id, and their first-announced order
//   P c:<context>          hash o s w u: owner, session id, cwd, updated ms
//   P audit                list of JSON permission decisions
//   P lease:<context>      "<replica>|<token>", with an expiry (redis-leases.ts)
//   P ev2:<task>           the events relayed to other replicas (redis-cluster.ts)
//   P quarantine           list of ids of records that could not be read back
//   P pcfg:<task>, P outbox:*  push configs and the push outbox (redis-push.ts)
// and, under their own prefix, the runtime's sessions (L D X ops with full
// keys; runtime/store/redis-runtime-store.ts).
// Equal scores sort by member, so "status ms desc, id desc" is a reverse range.
import { LuaScript } from "../../server/redis.js";

const HELPERS = `
local P = ARGV[1]
local function ok(owner) return #owner .. ':' .. owner end
`;

/**
 * ARGV: P, then ops: F ctx lease (fence check, first), T ctx id owner state ms
 * updated language names body, A ctx task artifact body, C ctx owner session
 * cwd updated channel ("" when none), U json, P - task id configJson (push config saved), R - task
 * id owner (removed if the owner's), E ctx task eventId payload now (a task
 * event: one job per config the task has now; after the P and R ops), and the
 * runtime's L ctx key row (append to a list), D ctx key value (set), X ctx key
 * (delete), then V key maxLen ttlMs body end (a stream entry {b: body} and
 * {end: 1} when end is '1', the stream trimmed to about maxLen entries and
 * expiring ttlMs after it; unfenced) and Z ctx value (the context's lease
 * deleted if it is still value: given back with the turn's last writes).
 * Returns the contexts whose writes were refused.
 */
export const COMMIT = new LuaScript(`${HELPERS}
local fenced, refused = {}, {}
local i, n = 2, #ARGV
while i <= n do
  local op, ctx = ARGV[i], ARGV[i + 1]
  if op == 'F' then
    if redis.call('GET', P .. 'lease:' .. ctx) ~= ARGV[i + 2] then
      fenced[ctx] = true
      refused[#refused + 1] = ctx
    end
    i = i + 3
  elseif op == 'T' then
    if not fenced[ctx] then
      local id, owner, s, m = ARGV[i + 2], ARGV[i + 3], ARGV[i + 4], ARGV[i + 5]
      local key = P .. 't:' .. id
      local old = redis.call('HMGET', key, 'o', 'c', 's')
      if old[1] then
        local was = ok(old[1])
        if old[1] ~= owner or old[2] ~= ctx then
          redis.call('ZREM', P .. 'to:' .. was, id)
          redis.call('ZREM', P .. 'tc:' .. was .. ':' .. old[2], id)
        end
        if old[1] ~= owner or old[3] ~= s then redis.call('ZREM', P .. 'ts:' .. was .. ':' .. old[3], id) end
      end
      redis.call('HSET', key, 'o', owner, 'c', ctx, 's', s, 'm', m, 'u', ARGV[i + 6], 'l', ARGV[i + 7],
        'n', ARGV[i + 8], 'b', ARGV[i + 9])
      local k = ok(owner)
      redis.call('ZADD', P .. 'to:' .. k, m, id)
      redis.call('ZADD', P .. 'tc:' .. k .. ':' .. ctx, m, id)
      redis.call('ZADD', P .. 'ts:' .. k .. ':' .. s, m, id)
      if s == '1' or s == '2' then redis.call('SADD', P .. 'unfinished', id)
      else redis.call('SREM', P .. 'unfinished', id) end
    end
    i = i + 10
  elseif op == 'A' then
    if not fenced[ctx] then
      local task, id = ARGV[i + 2], ARGV[i + 3]
      if redis.call('HSET', P .. 'a:' .. task, id, ARGV[i + 4]) == 1 then
        redis.call('RPUSH', P .. 'ao:' .. task, id)
      end
    end
    i = i + 5
  elseif op == 'C' then
    if not fenced[ctx] then
      redis.call('HSET', P .. 'c:' .. ctx, 'o', ARGV[i + 2], 's', ARGV[i + 3], 'w', ARGV[i + 4], 'u', ARGV[i + 5],
        'h', ARGV[i + 6])
    end
    i = i + 7
  elseif op == 'U' then
    redis.call('RPUSH', P .. 'audit', ctx)
    i = i + 2
  elseif op == 'P' then
    redis.call('HSET', P .. 'pcfg:' .. ARGV[i + 2], ARGV[i + 3], ARGV[i + 4])
    i = i + 5
  elseif op == 'R' then
    local key, id = P .. 'pcfg:' .. ARGV[i + 2], ARGV[i + 3]
    local raw = redis.call('HGET', key, id)
    if raw and cjson.decode(raw).owner == ARGV[i + 4] then redis.call('HDEL', key, id) end
    i = i + 5
  elseif op == 'E' then
    if not fenced[ctx] then
      local task, event, payload, now = ARGV[i + 2], ARGV[i + 3], ARGV[i + 4], ARGV[i + 5]
      local configs = redis.call('HGETALL', P .. 'pcfg:' .. task)
      for j = 1, #configs, 2 do
        -- Zero-padded: jobs due at the same ms are claimed in commit order.
        local id = string.format('%016d', redis.call('INCR', P .. 'outbox:seq'))
        redis.call('HSET', P .. 'outbox:j:' .. id, 'e', event, 't', task, 'i', configs[j], 'g', configs[j + 1],
          'p', payload, 'a', '0', 'n', now, 'r', '')
        redis.call('ZADD', P .. 'outbox:due', now, id)
      end
    end
    i = i + 6
  elseif op == 'L' then
    if not fenced[ctx] then redis.call('RPUSH', ARGV[i + 2], ARGV[i + 3]) end
    i = i + 4
  elseif op == 'D' then
    if not fenced[ctx] then redis.call('SET', ARGV[i + 2], ARGV[i + 3]) end
    i = i + 4
  elseif op == 'X' then
    if not fenced[ctx] then redis.call('DEL', ARGV[i + 2]) end
    i = i + 3
  elseif op == 'V' then
    if ARGV[i + 5] == '1' then
      redis.call('XADD', ctx, 'MAXLEN', '~', ARGV[i + 2], '*', 'b', ARGV[i + 4], 'end', '1')
    else
      redis.call('XADD', ctx, 'MAXLEN', '~', ARGV[i + 2], '*', 'b', ARGV[i + 4])
    end
    redis.call('PEXPIRE', ctx, ARGV[i + 3])
    i = i + 6
  elseif op == 'Z' then
    local key = P .. 'lease:' .. ctx
    if redis.call('GET', key) == ARGV[i + 2] then redis.call('DEL', key) end
    i = i + 3
  else
    return redis.error_reply('unknown op ' .. tostring(op))
  end
end
return refused
`);

/** The fields of a task (o c s m u l n b), then its artifact count and bodies when asked. */
const READ_TASK = `
local function readTask(id, withArtifacts)
  local f = redis.call('HMGET', P .. 't:' .. id, 'o', 'c', 's', 'm', 'u', 'l', 'n', 'b')
  if not f[1] then return nil end
  local out = { id, f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8] }
  if withArtifacts then
    local ids = redis.call('LRANGE', P .. 'ao:' .. id, 0, -1)
    out[#out + 1] = #ids
    for _, a in ipairs(ids) do
      out[#out + 1] = a
      out[#out + 1] = redis.call('HGET', P .. 'a:' .. id, a) or ''
    end
  else
    out[#out + 1] = 0
  end
  return out
end
`;

/** ARGV: P, then task ids. Returns the tasks that exist, each as readTask lays it out. */
export const GET_TASKS = new LuaScript(`${HELPERS}${READ_TASK}
local out = {}
for i = 2, #ARGV do
  local t = readTask(ARGV[i], true)
  if t then for _, v in ipairs(t) do out[#out + 1] = v end end
end
return out
`);

/**
 * ARGV: P owner context state minMs cursor limit withArtifacts (empty = no
 * filter). Returns false when the cursor names no matching task, else
 * { total, tasks... } with up to limit tasks in ListTasks order from the
 * cursor (artifacts for all but the last when asked).
 */
export const LIST_TASKS = new LuaScript(`${HELPERS}${READ_TASK}
local owner, ctx, state, minMs, cursor = ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]
local limit, withArtifacts = tonumber(ARGV[7]), ARGV[8] == '1'
local k = ok(owner)
local key, checkState = P .. 'to:' .. k, false
if ctx ~= '' then
  key = P .. 'tc:' .. k .. ':' .. ctx
  checkState = state ~= ''
elseif state ~= '' then
  key = P .. 'ts:' .. k .. ':' .. state
end
local min = '-inf'
if minMs ~= '' then min = minMs end
local max = '+inf'
local maxN
if cursor ~= '' then
  local c = redis.call('HMGET', P .. 't:' .. cursor, 'o', 'c', 's', 'm')
  if not c[1] or c[1] ~= owner or (ctx ~= '' and c[2] ~= ctx) or (state ~= '' and c[3] ~= state)
    or (minMs ~= '' and tonumber(c[4]) < tonumber(minMs)) then
    return false
  end
  max = c[4]
  maxN = tonumber(c[4])
end
local function matches(id)
  return not checkState or redis.call('HGET', P .. 't:' .. id, 's') == state
end
local total
if checkState then
  total = 0
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', key, min, '+inf')) do
    if matches(id) then total = total + 1 end
  end
else
  total = redis.call('ZCOUNT', key, min, '+inf')
end
local out = { total }
local found, offset = 0, 0
while found < limit do
  local batch = redis.call('ZREVRANGEBYSCORE', key, max, min, 'WITHSCORES', 'LIMIT', offset, 100)
  if #batch == 0 then break end
  offset = offset + #batch / 2
  for j = 1, #batch, 2 do
    local id = batch[j]
    local skip = maxN ~= nil and tonumber(batch[j + 1]) == maxN and id > cursor
    if not skip and matches(id) and found < limit then
      local t = readTask(id, withArtifacts and found < limit - 1)
      if t then
        found = found + 1
        for _, v in ipairs(t) do out[#out + 1] = v end
      end
    end
  end
end
return out
`);

/** ARGV: P id. Removes an unreadable task from every index, keeps its body under P q:t:<id>. */
export const QUARANTINE_TASK = new LuaScript(`${HELPERS}
local id = ARGV[2]
local key = P .. 't:' .. id
local f = redis.call('HMGET', key, 'o', 'c', 's')
if not f[1] then return 0 end
local k = ok(f[1])
redis.call('ZREM', P .. 'to:' .. k, id)
redis.call('ZREM', P .. 'tc:' .. k .. ':' .. f[2], id)
redis.call('ZREM', P .. 'ts:' .. k .. ':' .. f[3], id)
redis.call('SREM', P .. 'unfinished', id)
redis.call('RENAME', key, P .. 'q:t:' .. id)
redis.call('RPUSH', P .. 'quarantine', 'task ' .. id)
return 1
`);

/** ARGV: P task artifact. Moves an unreadable artifact out of the task's index. */
export const QUARANTINE_ARTIFACT = new LuaScript(`${HELPERS}
local task, id = ARGV[2], ARGV[3]
local body = redis.call('HGET', P .. 'a:' .. task, id)
if not body then return 0 end
redis.call('HSET', P .. 'q:a:' .. task, id, body)
redis.call('HDEL', P .. 'a:' .. task, id)
redis.call('LREM', P .. 'ao:' .. task, 0, id)
redis.call('RPUSH', P .. 'quarantine', 'artifact ' .. task .. ' ' .. id)
return 1
`);
