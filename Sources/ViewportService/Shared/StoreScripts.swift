import ViewportRedis

/// The Lua scripts that keep a session's record consistent in the store: each runs atomically
/// on the server, so the checks (epoch, lease) and the writes they guard cannot interleave with
/// another instance's.
///
/// The epoch is the fencing token (Kleppmann, "How to do distributed locking"): taking a session
/// (acquire) and giving it up (release) each increment it, and every write, renewal and delete
/// names the epoch its owner took it at. A write from an owner that was paused past its lease,
/// after another instance took the session, names an old epoch and is refused (`lost`), whatever
/// its lease says.
enum StoreScripts {
    /// The store's clock in milliseconds, and the start of a grace period in a cell when no
    /// instance's heartbeat reached the cell for `gap` ms before this (its `pulse` is gone while
    /// its `beat` exists): then that part of the store may have been unreachable for every
    /// instance (paused, restarted, failed over, cut off), or its owners are dead. Unless a grace
    /// runs already: in a cell nobody beats any more (its owners died) each grace is one lease,
    /// and an owner not heard from within the comeback window of its start is taken as dead
    /// (``acquire``). Expects `beatKey`, `graceKey`, `pulseKey` and `leaseMs` as locals.
    private static let notingOutages = #"""
        local clock = redis.call('TIME')
        local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
        if redis.call('EXISTS', pulseKey) == 0 and redis.call('EXISTS', beatKey) == 1 then
          redis.call('SET', graceKey, now, 'PX', leaseMs, 'NX')
        end
        """#

    /// One cell's heartbeat in full, sent by an instance that may hold leases in the cell
    /// (``CellLiveness``) when the cell's `pulse` may be gone; otherwise its beat is a plain
    /// `PEXPIRE` of the pulse. KEYS: the cell's `beat`, `grace`, `seen`, `pulse`. ARGV: lease ms,
    /// gap ms, whether this instance's beat or check reached this cell before ('1'/'0'),
    /// instance, and the floor: -1 (this instance begins to beat the cell: no expectation), 0 (it
    /// beat the cell before) or the store time (ms) it took a session of the cell at.
    ///
    /// The store heard from an instance in the cell now (`beat`, the store's clock; `seen`, per
    /// instance; `pulse`, which lives `gap` ms and which every beat, plain or not, renews). When
    /// `pulse` is gone (and the floor is more than the gap ago), no instance's beat reached the
    /// cell for that long although this one kept sending them: that part of the store was
    /// unreachable for every instance (paused, restarted, failed over, cut off), not one instance
    /// dead. Then a lease-long grace starts (`grace`), during which sessions of the cell whose
    /// owner did not release them are not taken from that owner (``acquire``): it gets to write
    /// back what it answered while the store was away, and takes its lapsed leases back. The
    /// same grace starts when `beat` is gone although this instance's beat or check reached the
    /// cell before (or is only the `1` of a coarse check, ``cellCheck``, where this instance's own
    /// beats had been: the pulse rule): the store lost the cell's keys (restarted empty, flushed,
    /// failed over to a replica that had not got them), and sessions their owners still hold are
    /// missing until written back (not a 404 meanwhile). Instances not heard from for a hundred
    /// leases leave `seen`.
    static let heartbeat = RedisScript(#"""
        local beatKey, graceKey, leaseMs, gap = KEYS[1], KEYS[2], tonumber(ARGV[1]), tonumber(ARGV[2])
        local clock = redis.call('TIME')
        local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
        local last = tonumber(redis.call('GET', beatKey) or '0')
        local floor = tonumber(ARGV[5])
        if (last == 0 and ARGV[3] == '1') or (floor >= 0 and last > 0 and now - floor > gap and redis.call('EXISTS', KEYS[4]) == 0) then
          redis.call('SET', graceKey, now, 'PX', leaseMs)
        end
        redis.call('SET', beatKey, now)
        redis.call('SET', KEYS[4], '1', 'PX', gap)
        redis.call('HSET', KEYS[3], ARGV[4], now)
        if redis.call('HLEN', KEYS[3]) > 64 then
          local all = redis.call('HGETALL', KEYS[3])
          for i = 1, #all, 2 do
            if now - tonumber(all[i + 1]) > 100 * leaseMs then redis.call('HDEL', KEYS[3], all[i]) end
          end
        end
        return 'ok'
        """#)

    /// The coarse check of a cell (``CellLiveness``), sent when a plain `EXISTS` found its `beat`
    /// missing. KEYS: the cell's `beat`, `grace`. ARGV: lease ms, whether this instance's beat or
    /// check reached this cell before ('1'/'0').
    ///
    /// Makes sure `beat` exists, so that a session missing from a cell with `beat` is gone (404)
    /// and one missing from a cell without it may have been lost by the store (``acquire``).
    /// Never moves an existing `beat` nor sets `pulse` (that would hide an outage from the cell's
    /// owners): a missing `beat` is set to `1` (long ago), and when this instance had reached the
    /// cell before, the store lost the cell's keys: a grace starts, as in ``heartbeat``.
    static let cellCheck = RedisScript(#"""
        if redis.call('EXISTS', KEYS[1]) == 1 then return 'ok' end
        if ARGV[2] == '1' then
          local clock = redis.call('TIME')
          redis.call('SET', KEYS[2], tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000), 'PX', ARGV[1])
        end
        redis.call('SET', KEYS[1], '1')
        return 'ok'
        """#)

    /// KEYS: session, lease, and the cell's `beat`, `grace`, `seen`, `pulse`. ARGV: instance,
    /// lease ms, handle block, comeback ms (how soon a live owner is heard from once the store
    /// answers again).
    ///
    /// `{'missing'}` when there is no such session (`{'outage', …}` while the store may have lost
    /// it: see ``heartbeat``); `{'wait', owner, lease ms left}` while another instance holds its
    /// lease (the asker then sends that owner a handover request); `{'outage', ms}` during
    /// the cell's grace after every instance lost it (see ``heartbeat``) when the previous owner
    /// did not release it (`free`): its owner may still have answered changes it could not
    /// write (ms: how long until a take can pass the checks, if that owner is not heard from
    /// again meanwhile); else takes it: `{'acquired', epoch, handles reserved before, version, snapshot,
    /// stolen, store ms}` (stolen: from an owner whose lease lapsed without a release; the store's
    /// clock, from which the new owner's beats of the cell count: ``heartbeat``). A handle block
    /// is reserved for the new owner.
    static let acquire = RedisScript(#"""
        if redis.call('HEXISTS', KEYS[1], 'snap') == 0 then
          -- Missing during a grace, or before any heartbeat reached a cell that lost its keys:
          -- an owner may still write it back. The asker beats the cell from its next round on
          -- (CellLiveness.waiting), which settles the latter within the comeback window.
          local grace = redis.call('PTTL', KEYS[4])
          if grace > 0 then return {'outage', grace} end
          if redis.call('EXISTS', KEYS[3]) == 0 then return {'outage', math.min(tonumber(ARGV[2]), tonumber(ARGV[4]))} end
          return {'missing'}
        end
        local lease = redis.call('GET', KEYS[2])
        if lease then
          local owner = string.match(lease, '^(.*)|') or ''
          if owner ~= ARGV[1] then return {'wait', owner, redis.call('PTTL', KEYS[2])} end
        end
        local stolen = 0
        if redis.call('HGET', KEYS[1], 'free') ~= '1' then
          local beatKey, graceKey, pulseKey, leaseMs = KEYS[3], KEYS[4], KEYS[6], tonumber(ARGV[2])
        """# + "\n" + notingOutages + "\n" + #"""
          local owner = redis.call('HGET', KEYS[1], 'owner')
          local grace = redis.call('PTTL', graceKey)
          if grace > 0 then
            -- Wait for the owner while it is heard from again (its lease lapsed: it takes it back
            -- with its next write), or while an owner still alive may not have been yet; an
            -- owner not back by then is taken as dead (every instance crashed, say).
            local seen = (owner and owner ~= ARGV[1]) and tonumber(redis.call('HGET', KEYS[5], owner) or '0') or 0
            local alive = seen > 0 and now - seen < leaseMs
            local started = tonumber(redis.call('GET', graceKey) or '0')
            local comeback = tonumber(ARGV[4])
            if alive or now - started < comeback then
              -- The wait until a take passes these checks, unless the owner is heard from again
              -- meanwhile: the comeback window's rest, and while the owner is alive the rest of
              -- its lease since it was heard from; the grace's end at most.
              local wait = started + comeback - now
              if alive then wait = math.max(wait, seen + leaseMs - now) end
              return {'outage', math.max(1, math.min(grace, wait))}
            end
          end
          if not lease and owner and owner ~= ARGV[1] then stolen = 1 end
        end
        redis.call('HDEL', KEYS[1], 'free')
        redis.call('HSET', KEYS[1], 'owner', ARGV[1])
        local epoch = redis.call('HINCRBY', KEYS[1], 'epoch', 1)
        local hwm = tonumber(redis.call('HGET', KEYS[1], 'hwm') or '0')
        redis.call('HSET', KEYS[1], 'hwm', hwm + tonumber(ARGV[3]))
        redis.call('SET', KEYS[2], ARGV[1] .. '|' .. epoch, 'PX', ARGV[2])
        local taken = redis.call('TIME')
        return {'acquired', epoch, hwm, tonumber(redis.call('HGET', KEYS[1], 'ver') or '0'), redis.call('HGET', KEYS[1], 'snap') or '', stolen,
          tonumber(taken[1]) * 1000 + math.floor(tonumber(taken[2]) / 1000)}
        """#)

    /// Writes of several sessions of one cell in one call (a script call costs more than the few
    /// commands each write runs). KEYS: per write its session, lease and reply key. ARGV: instance, lease
    /// ms, session ms, then per write: epoch, version, snapshot, handle reserve, renew ('1'/'0'),
    /// mode ('write'/'release'), reply ('1'/'0'). Answers one status per write, in order.
    ///
    /// Each write is the fencing check and the write, nothing more, since it runs for every flush
    /// of every session: it writes the snapshot if its version is newer than the stored one and
    /// raises the handle reserve when the stored epoch is the writer's. The epoch alone proves
    /// the session is the writer's: acquiring, releasing, reclaiming and deleting each change it,
    /// and a lease is only ever set with the epoch it names. With `renew` (every eighth of a
    /// lease, not every flush) it also renews the lease (or takes back a lapsed one: same epoch,
    /// nobody took it) and the record's expiry; the layouts' expiry and the writer's heartbeat are
    /// commands of their own in the same pipeline
    /// (``RedisStateStore/round(heartbeat:writes:renewals:operation:)``).
    /// `release` then gives the session up (epoch + 1, no lease) and, with a reply, tells the
    /// instance that asked. A missing record is made, with a lease: a session opened here, or one
    /// the server lost (restarted without persistence) while its owner still had it. A deleted
    /// session leaves a tombstone (`deleted`, a newer epoch) that no write brings back.
    /// A write answers `ok`, or `lost` when another owner (a newer epoch) has it or it was deleted.
    static let write = RedisScript(#"""
        local instance, leaseMs, sessionMs = ARGV[1], ARGV[2], ARGV[3]
        local function write(key, leaseKey, replyKey, asked, version, snapshot, reserve, renew, mode, tell)
          local stored = redis.call('HMGET', key, 'epoch', 'ver', 'hwm')
          local epoch, ver, hwm = stored[1], stored[2], stored[3]
          if epoch and epoch ~= asked then
            return 'lost'
          elseif not epoch then
            local lease = redis.call('GET', leaseKey)
            if lease and lease ~= instance .. '|' .. asked then return 'lost' end
            redis.call('HSET', key, 'epoch', asked, 'ver', '0', 'hwm', '0', 'owner', instance)
            ver, hwm, renew = '0', '0', '1'
          end
          local raise = tonumber(reserve) > tonumber(hwm or '0')
          if tonumber(version) > tonumber(ver or '0') then
            if raise then
              redis.call('HSET', key, 'ver', version, 'snap', snapshot, 'hwm', reserve)
            else
              redis.call('HSET', key, 'ver', version, 'snap', snapshot)
            end
          elseif raise then
            redis.call('HSET', key, 'hwm', reserve)
          end
          if mode == 'release' then
            redis.call('HINCRBY', key, 'epoch', 1)
            redis.call('HSET', key, 'free', '1')
            redis.call('DEL', leaseKey)
            redis.call('PEXPIRE', key, sessionMs)
            if tell == '1' then
              redis.call('RPUSH', replyKey, 'released')
              redis.call('PEXPIRE', replyKey, 10000)
            end
          elseif renew == '1' then
            -- Under the writer's epoch a lease can only be the writer's own: prolonging it is
            -- cheaper than setting it again, which is left for a lapsed one.
            if redis.call('PEXPIRE', leaseKey, leaseMs) == 0 then
              redis.call('SET', leaseKey, instance .. '|' .. asked, 'PX', leaseMs)
            end
            redis.call('PEXPIRE', key, sessionMs)
          end
          return 'ok'
        end
        local answers = {}
        for i = 0, #KEYS / 3 - 1 do
          local k, a = i * 3, 3 + i * 7
          answers[i + 1] = write(KEYS[k + 1], KEYS[k + 2], KEYS[k + 3], ARGV[a + 1], ARGV[a + 2], ARGV[a + 3], ARGV[a + 4], ARGV[a + 5], ARGV[a + 6], ARGV[a + 7])
        end
        return answers
        """#)

    /// Renewals of several sessions of one cell in one call (as ``write``). KEYS: per renewal its
    /// session and lease. ARGV: instance, lease ms, then per renewal: epoch, session ms ('0':
    /// leave the session's expiry). Renews the lease of an owner that still is one (the epoch
    /// proves it, as in ``write``): per renewal `ok` or `lost`, or `missing` when the server lost
    /// the record (the owner writes it again). A session read since the last renewal lives on
    /// (its layouts too: their expiry is pushed back in the same pipeline; a session only read
    /// kept its record while its layout expired: an audit).
    static let renew = RedisScript(#"""
        local instance, leaseMs = ARGV[1], ARGV[2]
        local answers = {}
        for i = 1, #KEYS / 2 do
          local key, leaseKey, asked, sessionMs = KEYS[2 * i - 1], KEYS[2 * i], ARGV[1 + 2 * i], ARGV[2 + 2 * i]
          local epoch = redis.call('HGET', key, 'epoch')
          if not epoch then
            answers[i] = 'missing'
          elseif epoch ~= asked then
            answers[i] = 'lost'
          else
            -- Under the owner's epoch a lease can only be the owner's own (see write).
            if redis.call('PEXPIRE', leaseKey, leaseMs) == 0 then
              redis.call('SET', leaseKey, instance .. '|' .. asked, 'PX', leaseMs)
            end
            if sessionMs ~= '0' then redis.call('PEXPIRE', key, sessionMs) end
            answers[i] = 'ok'
          end
        end
        return answers
        """#)

    /// KEYS: session, lease. ARGV: instance, epoch, lease ms.
    ///
    /// Takes back a session whose release (named `epoch`) got no answer, at `epoch + 2`, whether
    /// the release ran or not: the release did not run (the epoch is still `epoch`, the lease
    /// this instance's or lapsed), or it ran and nobody took the session since (`epoch + 1`,
    /// free), or this reclaim ran before and its answer was lost (`epoch + 2`, this instance
    /// the owner). The new epoch fences the release should it reach the store after this.
    /// Answers `{'ok', epoch + 2}`, `{'lost'}` when another instance took the session (or it
    /// was deleted), `{'missing'}` when the server lost the record.
    static let reclaim = RedisScript(#"""
        local epoch = redis.call('HGET', KEYS[1], 'epoch')
        if not epoch then return {'missing'} end
        local asked, target = tonumber(ARGV[2]), tonumber(ARGV[2]) + 2
        local stored = tonumber(epoch)
        local lease = redis.call('GET', KEYS[2])
        local ok = false
        if redis.call('HGET', KEYS[1], 'deleted') == '1' then
          ok = false
        elseif stored == asked then
          ok = (not lease) or lease == ARGV[1] .. '|' .. ARGV[2]
        elseif stored == asked + 1 then
          ok = (not lease) and redis.call('HGET', KEYS[1], 'free') == '1'
        elseif stored == target then
          ok = redis.call('HGET', KEYS[1], 'owner') == ARGV[1] and ((not lease) or lease == ARGV[1] .. '|' .. target)
        end
        if not ok then return {'lost'} end
        redis.call('HSET', KEYS[1], 'epoch', target, 'owner', ARGV[1])
        redis.call('HDEL', KEYS[1], 'free')
        redis.call('SET', KEYS[2], ARGV[1] .. '|' .. target, 'PX', ARGV[3])
        return {'ok', target}
        """#)

    /// KEYS: session, lease. ARGV: instance, epoch, session ms. Deletes a session its owner
    /// ends, leaving a tombstone for the session's lifetime (a paused former owner must not write
    /// it back): `ok` (also when it was not stored), or `lost` when another owner has it.
    static let delete = RedisScript(#"""
        local epoch = redis.call('HGET', KEYS[1], 'epoch')
        if epoch and epoch ~= ARGV[2] then return 'lost' end
        local lease = redis.call('GET', KEYS[2])
        if lease and lease ~= ARGV[1] .. '|' .. ARGV[2] then return 'lost' end
        redis.call('DEL', KEYS[1], KEYS[2])
        redis.call('HSET', KEYS[1], 'epoch', tonumber(ARGV[2]) + 1, 'deleted', '1')
        redis.call('PEXPIRE', KEYS[1], ARGV[3])
        return 'ok'
        """#)
}
