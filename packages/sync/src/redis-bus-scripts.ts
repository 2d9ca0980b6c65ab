/** The Lua scripts the Redis bus runs, each doing its checks and writes in one atomic step. */

// Stores and announces in one step, so a subscriber that hears an announcement can always fetch that version,
// and a slower control plane replica never replaces a newer snapshot: a head of a later epoch (see core's epoch.ts),
// or of the same epoch and a higher version, stays. With ARGV[6] = '1' (the control plane found the head forged or
// foreign) the snapshot replaces whatever is stored. Returns 1 when stored, 0 when refused, 2 when the head is this very
// snapshot already (the same version and hash, published by another control plane): nothing is stored or announced
// again (ARGV[8] = '1' for a sealed snapshot, which does replace a stored one without ARGV[9], the sealed marker).
export const PUBLISH_SCRIPT = `
local function epoch_time(e)
  if type(e) ~= 'string' then return -1 end
  local t = string.match(e, '^(%d+)%-%x+$')
  if t then return tonumber(t) end
  return -1
end
local head = redis.call('GET', KEYS[2])
if head and ARGV[6] ~= '1' then
  local ok, current = pcall(cjson.decode, head)
  if ok and type(current) == 'table' then
    local head_epoch, new_epoch = current.epoch, ARGV[5]
    if type(head_epoch) ~= 'string' then head_epoch = '' end
    local ht, nt = epoch_time(head_epoch), epoch_time(new_epoch)
    if ht > nt or (ht == nt and ht >= 0 and head_epoch > new_epoch) then return 0 end
    local same_epoch = (ht == nt) and (ht < 0 or head_epoch == new_epoch)
    if same_epoch and tonumber(current.version) and tonumber(current.version) > tonumber(ARGV[1]) then return 0 end
    -- the same version with the same content is there already (another control plane published it): announced once,
    -- unless this one is sealed and the stored one is not (an upgraded control plane replaces an earlier release's)
    if same_epoch and tonumber(current.version) == tonumber(ARGV[1]) and current.hash == ARGV[7] then
      local kept = redis.call('GET', KEYS[1])
      if ARGV[8] ~= '1' or (kept and string.find(kept, ARGV[9], 1, true)) then return 2 end
    end
  end
end
redis.call('SET', KEYS[1], ARGV[2])
redis.call('SET', KEYS[2], ARGV[3])
redis.call('SET', KEYS[3], ARGV[3])
redis.call('DEL', KEYS[4])
redis.call('PUBLISH', ARGV[4], ARGV[3])
return 1
`;

// Lua prelude: the head (KEYS[1]) decoded as 'current', its epoch as 'head_epoch' ('' for none); returns 0 when there is no head.
export const READ_HEAD = `
local head = redis.call('GET', KEYS[1])
if not head then return 0 end
local ok, current = pcall(cjson.decode, head)
if not ok or type(current) ~= 'table' then return 0 end
local head_epoch = current.epoch
if type(head_epoch) ~= 'string' then head_epoch = '' end
`;

// Keeps a delta and moves the head to it, only when it continues the head: same epoch, from <= head < version.
export const PUBLISH_DELTA_SCRIPT = `${READ_HEAD}
if head_epoch ~= ARGV[3] then return 0 end
local hv = tonumber(current.version)
if not hv or hv < tonumber(ARGV[1]) or hv >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[4])
local extra = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[8])
if extra > 0 then redis.call('ZREMRANGEBYRANK', KEYS[2], 0, extra - 1) end
redis.call('SET', KEYS[1], ARGV[5])
redis.call('PUBLISH', ARGV[6], ARGV[7])
return 1
`;

// Stores a full snapshot without announcing it: of the head's epoch, not above the head, above the stored one.
export const STORE_SNAPSHOT_SCRIPT = `${READ_HEAD}
if head_epoch ~= ARGV[2] or tonumber(current.version) < tonumber(ARGV[1]) then return 0 end
local stored = redis.call('GET', KEYS[2])
if stored then
  local ok2, s = pcall(cjson.decode, stored)
  if ok2 and type(s) == 'table' then
    local se = s.epoch
    if type(se) ~= 'string' then se = '' end
    if se == ARGV[2] and tonumber(s.version) and tonumber(s.version) >= tonumber(ARGV[1]) then return 0 end
  end
end
redis.call('SET', KEYS[3], ARGV[3])
redis.call('SET', KEYS[2], ARGV[4])
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', ARGV[1])
return 1
`;

// Purges rows not seen since the cutoff, then returns the rest, most recently seen first.
export const LIST_SCRIPT = `
local stale = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[1])
for _, id in ipairs(stale) do
  redis.call('HDEL', KEYS[1], id)
  redis.call('ZREM', KEYS[2], id)
end
local ids = redis.call('ZREVRANGE', KEYS[2], 0, -1)
local rows = {}
for i, id in ipairs(ids) do
  rows[i] = redis.call('HGET', KEYS[1], id) or ''
end
return rows
`;
