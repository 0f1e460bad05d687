//! `--chaos`: the server's bounds and S3's rules, each case checked by the answer a
//! production S3 server gives. The requests that must be refused go through a client that
//! never sends a request again (no retry hides an answer); the ones that free or use room
//! again back off on SlowDown, since the other clients' chaos may hold the room a moment.
//! What a case leaves held the server finds at its exit (its counts against what it holds).

use super::*;

/// Every case once. `key` is the chaos object, `data` its bytes (stored). A summary.
pub async fn prove(run: &mut Run, a: &Args, url: &str, key: &str, data: &[u8]) -> Result<String> {
    let raw = sdk(url, &a.access_key, &a.secret_key, RetryConfig::disabled());
    let mut times = Vec::new();
    let mut lap = Instant::now();
    let mut time = |what: &str| {
        times.push(format!("{what} {:.1} s", lap.elapsed().as_secs_f64()));
        lap = Instant::now();
    };
    plain(&raw, key, data).await?;
    ranges(run, &raw, key, data).await?;
    time("ranges");
    part_rules(run, &raw, key).await?;
    time("part rules");
    let guesses = upload_ids(run, &raw, key).await?;
    time("upload ids");
    let uploads = uploads(run, &raw, a, key).await?;
    time("uploads");
    let (abandoned, again) = abandoned(run, &raw, a, key).await?;
    time("abandoned uploads");
    // Filling the parts' room moves its bytes: one client does it (the first), the others'
    // uploads meanwhile wait on SlowDown.
    let parts = if a.id == 1 {
        format!("after {} bytes of parts", part_bytes(run, &raw, a, key).await?)
    } else {
        "parts' bytes filled by client 1".to_owned()
    };
    time("part bytes");
    let (slow, failed) = receiving(run, &raw, a, key).await?;
    time("receiving");
    // Filling the store moves its bytes too: client 1 does it, the others' PUTs meanwhile
    // wait on 507.
    let stored = if a.id == 1 {
        stored(run, &raw, a, key).await?
    } else {
        "the store filled by client 1".to_owned()
    };
    time("stored bytes");
    Ok(format!(
        "bounds: a PUT and a GET by body, Range past the end 416, part lists InvalidPart/InvalidPartOrder/EntityTooSmall/MalformedXML and part numbers InvalidArgument, another key's id and {guesses} guessed ids NoSuchUpload and the owner's upload intact, SlowDown at the {uploads}th upload, {abandoned} uploads abandoned: SlowDown, aborted past --upload-idle-secs {} (an upload created {again:.1} s after and completed, a part of an abandoned one NoSuchUpload), {parts}, and for {slow} of {} RDMA PUTs at once ({failed} 500 RDMATransferFailed from the dead client), the room given back by aborts; {stored} ({})",
        a.bounds.upload_idle_secs,
        slow + failed,
        times.join(", ")
    ))
}

/// Plain S3 through the same bounds: a PUT with its bytes in the body (no token), read back
/// by a GET without a token (the body read from the object a chunk at a time).
async fn plain(raw: &aws_sdk_s3::Client, key: &str, data: &[u8]) -> Result<()> {
    let key = format!("{key}-plain");
    let put = || {
        raw.put_object()
            .bucket(BUCKET)
            .key(&key)
            .body(ByteStream::from(data.to_vec()))
            .send()
    };
    backing_off(None, put).await?;
    let out = raw.get_object().bucket(BUCKET).key(&key).send().await?;
    let body = out.body.collect().await?.into_bytes();
    check(body == data, || {
        format!("{key}: a PUT and a GET by body: the bytes differ")
    })?;
    raw.delete_object().bucket(BUCKET).key(&key).send().await?;
    Ok(())
}

/// Whether `r` is S3's 503 SlowDown naming `flag`, the bound reached.
fn slow_down_of(r: &Option<Refusal>, flag: &str) -> bool {
    r.as_ref()
        .is_some_and(|r| r.is(503, protocol::SLOW_DOWN) && r.message.contains(flag))
}

/// A `Range` past the object is 416 InvalidRange with `Content-Range: bytes */<length>`, with
/// a token as without one; a suffix longer than the object, or an end past it, is satisfiable
/// (RFC 9110 14.1.1): 206 with the object's bytes.
async fn ranges(run: &mut Run, raw: &aws_sdk_s3::Client, key: &str, data: &[u8]) -> Result<()> {
    let len = data.len();
    for range in [format!("bytes={len}-"), format!("bytes={}-{}", len + 1000, len + 2000)] {
        for rdma in [false, true] {
            let cap = Capture::default();
            let op = raw.get_object().bucket(BUCKET).key(key).range(&range).customize();
            let (guard, token) = run.exposed.mint_guarded(0, len, Direction::Get)?;
            let op = if rdma {
                op.rdma_token(token.format()?, &cap)
            } else {
                op.interceptor(cap.clone())
            };
            let r = refusal(op.send().await);
            drop(guard);
            let s = cap.seen();
            check(
                r.as_ref().is_some_and(|r| r.is(416, "InvalidRange"))
                    && s.content_range.as_deref() == Some(&format!("bytes */{len}")),
                || format!("GET {range} of {len} bytes (token: {rdma}): {s:?} {r:?}"),
            )?;
        }
    }
    for range in [format!("bytes=-{}", 3 * len), format!("bytes=0-{}", 3 * len)] {
        let cap = Capture::default();
        let out = raw
            .get_object()
            .bucket(BUCKET)
            .key(key)
            .range(&range)
            .customize()
            .interceptor(cap.clone())
            .send()
            .await?;
        let body = out.body.collect().await?.into_bytes();
        let s = cap.seen();
        check(
            s.status == 206
                && body == data
                && s.content_range.as_deref() == Some(&format!("bytes 0-{}/{len}", len - 1)),
            || {
                format!(
                    "GET {range} of {len} bytes: {s:?}, the object's bytes: {}",
                    body == data
                )
            },
        )?;
    }
    Ok(())
}

/// Part `number` of upload `id` of `key`: `len` bytes of the buffer at `at`, by RDMA through
/// `s3`, sent again while it is answered SlowDown but for one naming `but`: its ETag, or how
/// it was refused.
async fn upload_part(
    exposed: &mut Exposed<Vec<u8>>,
    s3: &aws_sdk_s3::Client,
    (key, id): (&str, &str),
    number: i32,
    (at, len): (usize, usize),
    but: Option<&str>,
) -> Result<std::result::Result<String, Refusal>> {
    let (_guard, token) = exposed.mint_guarded(at, len, Direction::Put)?;
    let text = token.format()?;
    let cap = Capture::default();
    let r = backing_off(but, || {
        s3.upload_part()
            .bucket(BUCKET)
            .key(key)
            .upload_id(id)
            .part_number(number)
            .customize()
            .rdma_token(text.clone(), &cap)
            .send()
    })
    .await;
    Ok(match r {
        Ok(out) => Ok(out.e_tag().ok_or("a part without an ETag")?.to_owned()),
        Err(e) => Err(refusal(Err::<(), _>(e)).unwrap_or_default()),
    })
}

/// A new multipart upload of `key`: its id.
async fn create(run: &Run, key: &str) -> Result<String> {
    let up = backing_off(None, || run.s3.create_multipart_upload().bucket(BUCKET).key(key).send()).await;
    let up = up.map_err(|e| format!("an upload of {key}: {:?}", refusal(Err::<(), _>(e))))?;
    Ok(up.upload_id().ok_or("no upload id")?.to_owned())
}

/// An AbortMultipartUpload of upload `id` of `key`: how it was refused.
async fn abort(s3: &aws_sdk_s3::Client, key: &str, id: &str) -> Option<Refusal> {
    refusal(
        s3.abort_multipart_upload()
            .bucket(BUCKET)
            .key(key)
            .upload_id(id)
            .send()
            .await,
    )
}

/// The parts a CompleteMultipartUpload lists: number, ETag.
type PartList<'a> = &'a [(i32, &'a str)];

/// The list of a CompleteMultipartUpload naming `parts`.
fn part_list(parts: PartList<'_>) -> CompletedMultipartUpload {
    let list = parts
        .iter()
        .map(|(n, etag)| CompletedPart::builder().part_number(*n).e_tag(*etag).build());
    CompletedMultipartUpload::builder()
        .set_parts(Some(list.collect()))
        .build()
}

/// A CompleteMultipartUpload of `parts`: how it was refused.
async fn complete(s3: &aws_sdk_s3::Client, (key, id): (&str, &str), parts: PartList<'_>) -> Option<Refusal> {
    let r = s3
        .complete_multipart_upload()
        .bucket(BUCKET)
        .key(key)
        .upload_id(id)
        .multipart_upload(part_list(parts))
        .send()
        .await;
    refusal(r)
}

/// S3's rules on parts. A part number outside 1..=10000 is 400 InvalidArgument. A
/// CompleteMultipartUpload listing no part (MalformedXML), parts out of order
/// (InvalidPartOrder), a part not uploaded or by another ETag (InvalidPart), a part under
/// 5 MiB before the last (EntityTooSmall) is refused and leaves the upload open: completed
/// then with a right list, the object is its listed parts' bytes, and the upload is gone.
async fn part_rules(run: &mut Run, raw: &aws_sdk_s3::Client, key: &str) -> Result<()> {
    let key = format!("{key}-parts");
    let id = create(run, &key).await?;
    let big = common::pattern(5 << 20, 0x5eed);
    let small = common::pattern(4096, 0x5a11);
    run.exposed.write(0, &big)?;
    run.exposed.write(big.len(), &small)?;
    let up = (key.as_str(), id.as_str());
    for number in [0, 10_001] {
        let r = upload_part(&mut run.exposed, raw, up, number, (big.len(), small.len()), None).await?;
        check(r.as_ref().is_err_and(|r| r.is(400, "InvalidArgument")), || {
            format!("part number {number}: {r:?}")
        })?;
    }
    let e1 = upload_part(&mut run.exposed, raw, up, 1, (0, big.len()), None)
        .await?
        .map_err(|r| format!("part 1: {r:?}"))?;
    let e2 = upload_part(&mut run.exposed, raw, up, 2, (big.len(), small.len()), None)
        .await?
        .map_err(|r| format!("part 2: {r:?}"))?;
    // Part 3 in the body, as plain S3 sends it.
    let out = backing_off(None, || {
        raw.upload_part()
            .bucket(BUCKET)
            .key(&key)
            .upload_id(&id)
            .part_number(3)
            .body(ByteStream::from(small.clone()))
            .send()
    })
    .await?;
    let e3 = out.e_tag().ok_or("part 3 without an ETag")?.to_owned();
    // Each list and S3's answer (all 400).
    let refused: [(PartList, &str); 6] = [
        (&[], "MalformedXML"),
        (&[(1, &e1), (4, &e3)], "InvalidPart"),
        (&[(1, &e2), (2, &e2)], "InvalidPart"),
        (&[(2, &e2), (1, &e1)], "InvalidPartOrder"),
        (&[(1, &e1), (1, &e1)], "InvalidPartOrder"),
        (&[(2, &e2), (3, &e3)], "EntityTooSmall"),
    ];
    for (parts, code) in refused {
        let r = complete(raw, up, parts).await;
        check(r.as_ref().is_some_and(|r| r.is(400, code)), || {
            format!("complete {parts:?}: {r:?}, not 400 {code}")
        })?;
    }
    // Still open: the right list completes it (part 3, not listed, is dropped).
    let r = complete(raw, up, &[(1, &e1), (2, &e2)]).await;
    check(r.is_none(), || {
        format!("complete parts 1 and 2 after the refusals: {r:?}")
    })?;
    let whole = [big, small].concat();
    run.get(&key, &whole, None, 0).await?;
    let r = complete(raw, up, &[(1, &e1), (2, &e2)]).await;
    check(r.as_ref().is_some_and(|r| r.is(404, "NoSuchUpload")), || {
        format!("complete a completed upload: {r:?}")
    })?;
    run.s3.delete_object().bucket(BUCKET).key(&key).send().await?;
    Ok(())
}

/// `--max-uploads`: uploads created until one is refused, 503 SlowDown naming the bound, at
/// the latest past the bound (other clients hold some too). Aborted, they give the room
/// back: an upload is created again; an aborted upload is gone (NoSuchUpload). The count of
/// uploads this client created before the refusal.
async fn uploads(run: &Run, raw: &aws_sdk_s3::Client, a: &Args, key: &str) -> Result<usize> {
    let key = format!("{key}-uploads");
    let mut mine = Vec::new();
    fill_uploads(raw, a, &key, &mut mine).await?;
    for id in &mine {
        let r = abort(&run.s3, &key, id).await;
        check(r.is_none(), || format!("abort {id}: {r:?}"))?;
    }
    let id = create(run, &key).await?;
    let r = abort(raw, &key, &id).await;
    check(r.is_none(), || format!("abort an upload: {r:?}"))?;
    let r = raw
        .upload_part()
        .bucket(BUCKET)
        .key(&key)
        .upload_id(&id)
        .part_number(1)
        .body(ByteStream::from(vec![1u8; 16]))
        .send()
        .await;
    let r = refusal(r);
    check(r.as_ref().is_some_and(|r| r.is(404, "NoSuchUpload")), || {
        format!("a part of an aborted upload: {r:?}")
    })?;
    let r = abort(raw, &key, &id).await;
    check(r.as_ref().is_some_and(|r| r.is(404, "NoSuchUpload")), || {
        format!("abort an aborted upload: {r:?}")
    })?;
    Ok(mine.len() + 1)
}

/// Uploads of `key` created through `raw` (no retry), added to `mine`, until one is refused:
/// 503 SlowDown naming `--max-uploads`, at the latest past the bound (other clients hold some
/// too).
async fn fill_uploads(raw: &aws_sdk_s3::Client, a: &Args, key: &str, mine: &mut Vec<String>) -> Result<()> {
    let refused = loop {
        let r = raw.create_multipart_upload().bucket(BUCKET).key(key).send().await;
        match r {
            Ok(out) => mine.push(out.upload_id().ok_or("no upload id")?.to_owned()),
            Err(e) => break refusal(Err::<(), _>(e)),
        }
        check(mine.len() as u64 <= a.bounds.max_uploads, || {
            format!(
                "{} uploads open, past --max-uploads {}, none refused",
                mine.len(),
                a.bounds.max_uploads
            )
        })?;
    };
    check(slow_down_of(&refused, "--max-uploads"), || {
        format!(
            "upload {} of {key} past --max-uploads {}: {refused:?}",
            mine.len() + 1,
            a.bounds.max_uploads
        )
    })
}

/// `--upload-idle-secs`: uploads created and abandoned (no part, no completion, no abort)
/// until one is refused, 503 SlowDown naming `--max-uploads`, at once. Once no request named
/// them for the idle time, the server aborts them: an upload is created (the server, finding
/// `--max-uploads` full, aborts the abandoned uploads before it refuses; a server that does
/// not refuses it for ever: told every 30 s, and the run times out) and completed, its bytes checked, and a
/// part of an abandoned upload is 404 NoSuchUpload. (The server's exit check finds whether
/// the aborted uploads' room was given back.) The count of uploads abandoned, and the
/// seconds the upload was created in after the idle time.
async fn abandoned(run: &mut Run, raw: &aws_sdk_s3::Client, a: &Args, key: &str) -> Result<(usize, f64)> {
    let key = format!("{key}-abandoned");
    let mut mine = vec![create(run, &key).await?];
    fill_uploads(raw, a, &key, &mut mine).await?;
    let last = Instant::now();
    let idle = Duration::from_secs(a.bounds.upload_idle_secs);
    tokio::time::sleep(idle + Duration::from_millis(200)).await;
    let id = create(run, &key).await?;
    let again = last.elapsed().saturating_sub(idle).as_secs_f64();
    let data = common::pattern(4096, 0xab4d);
    run.exposed.write(0, &data)?;
    let e1 = upload_part(&mut run.exposed, &run.s3, (&key, &id), 1, (0, data.len()), None)
        .await?
        .map_err(|r| format!("{key}: a part of the upload after the abandoned ones: {r:?}"))?;
    let r = backing_off_complete(raw, (&key, &id), &[(1, &e1)]).await;
    check(r.is_none(), || {
        format!("{key}: complete the upload after the abandoned ones: {r:?}")
    })?;
    run.get(&key, &data, None, 0).await?;
    let r = refusal(
        raw.upload_part()
            .bucket(BUCKET)
            .key(&key)
            .upload_id(&mine[0])
            .part_number(1)
            .body(ByteStream::from(data.clone()))
            .send()
            .await,
    );
    check(r.as_ref().is_some_and(|r| r.is(404, "NoSuchUpload")), || {
        format!(
            "a part of an upload abandoned for --upload-idle-secs {}: {r:?}",
            a.bounds.upload_idle_secs
        )
    })?;
    run.s3.delete_object().bucket(BUCKET).key(&key).send().await?;
    Ok((mine.len(), again))
}

/// `--max-part-bytes`: parts of the largest size the server takes by RDMA uploaded until one
/// is refused, 503 SlowDown naming the bound, before this client holds more than the bound.
/// Aborting the upload gives their bytes back: as large a part is taken again. The bytes
/// held at the refusal.
async fn part_bytes(run: &mut Run, raw: &aws_sdk_s3::Client, a: &Args, key: &str) -> Result<u64> {
    let key = format!("{key}-part-bytes");
    let size = run.exposed.mr().len().min(64 << 20);
    let id = create(run, &key).await?;
    let up = (key.as_str(), id.as_str());
    let mut held = 0u64;
    let refused = loop {
        let number = (held / size as u64) as i32 + 1;
        match upload_part(&mut run.exposed, raw, up, number, (0, size), Some("--max-part-bytes")).await? {
            Ok(_) => held += size as u64,
            Err(r) => break r,
        }
        check(held <= a.bounds.max_part_bytes, || {
            format!(
                "{held} bytes of parts held, past --max-part-bytes {}",
                a.bounds.max_part_bytes
            )
        })?;
    };
    let refused = Some(refused);
    check(slow_down_of(&refused, "--max-part-bytes"), || {
        format!(
            "a part of {size} bytes with {held} held, --max-part-bytes {}: {refused:?}",
            a.bounds.max_part_bytes
        )
    })?;
    let r = abort(&run.s3, &key, &id).await;
    check(r.is_none(), || format!("abort an upload: {r:?}"))?;
    let id = create(run, &key).await?;
    let again = upload_part(&mut run.exposed, &run.s3, (&key, &id), 1, (0, size), None).await?;
    check(again.is_ok(), || format!("a part after the abort: {again:?}"))?;
    let r = abort(&run.s3, &key, &id).await;
    check(r.is_none(), || format!("abort an upload: {r:?}"))?;
    Ok(held)
}

/// `--max-receiving-bytes`: RDMA PUTs whose registrations together pass the bound, sent at
/// once to a dead client's buffer (each holds its registration until its READ gives up): some
/// are 503 SlowDown naming the bound, the others 500 RDMATransferFailed. (A PUT is taken
/// again afterwards: the chaos's last PUT.) How many of each.
///
/// "At once" is the client's: a server slowed enough (a loaded machine) may take one burst's
/// requests so far apart that each finds the room the one before gave back. So up to
/// `ROUNDS` bursts are sent until one is refused: a server without the bound refuses none in
/// any of them.
async fn receiving(run: &Run, raw: &aws_sdk_s3::Client, a: &Args, key: &str) -> Result<(usize, usize)> {
    const ROUNDS: usize = 5;
    let size = (64 << 20).min(a.bounds.max_receiving_bytes as usize);
    let at_once = (a.bounds.max_receiving_bytes / size as u64) as usize + 3;
    let (token, _) = dead_client_tokens(run, a.key, size)?;
    let (mut slow, mut failed) = (0, 0);
    for round in 0..ROUNDS {
        let mut puts = Vec::with_capacity(at_once);
        for i in 0..at_once {
            let (s3, key, token) = (raw.clone(), format!("{key}-receiving-{round}-{i}"), token.clone());
            puts.push(tokio::spawn(async move {
                put_token(&s3, &key, (token, None), false, Some("--max-receiving-bytes")).await
            }));
        }
        for put in puts {
            let (s, r) = put.await?;
            if slow_down_of(&r, "--max-receiving-bytes") {
                slow += 1;
            } else if r.as_ref().is_some_and(|r| r.is(500, protocol::TRANSFER_FAILED)) {
                failed += 1;
            } else {
                return Err(format!("an RDMA PUT to a dead client: {s:?} {r:?}").into());
            }
        }
        if slow > 0 {
            break;
        }
    }
    check(slow > 0, || {
        format!(
            "{ROUNDS} bursts of {at_once} RDMA PUTs of {size} bytes at once, --max-receiving-bytes {}: none refused",
            a.bounds.max_receiving_bytes
        )
    })?;
    Ok((slow, failed))
}

/// Upload ids. An upload's id is of its bucket and key only: a part, a
/// CompleteMultipartUpload or an abort naming it under another key or bucket is 404
/// NoSuchUpload. Ids cannot be guessed: the ids next to one's own (its trailing number
/// counted down and up, as a thief would with sequential ids) name no upload of the key
/// (NoSuchUpload). The owner's upload, created just before the thief's, then completes with
/// its own bytes, each checked. The count of guesses.
async fn upload_ids(run: &mut Run, raw: &aws_sdk_s3::Client, key: &str) -> Result<usize> {
    const NEAR: u64 = 8;
    let (key, thief) = (format!("{key}-victim"), format!("{key}-thief"));
    let id = create(run, &key).await?;
    let stolen = create(run, &thief).await?;
    let big = common::pattern(5 << 20, 0x71c7);
    let small = common::pattern(4096, 0x7a11);
    run.exposed.write(0, &big)?;
    run.exposed.write(big.len(), &small)?;
    let up = (key.as_str(), id.as_str());
    let e1 = upload_part(&mut run.exposed, &run.s3, up, 1, (0, big.len()), None)
        .await?
        .map_err(|r| format!("the owner's part 1: {r:?}"))?;
    let e2 = upload_part(&mut run.exposed, &run.s3, up, 2, (big.len(), small.len()), None)
        .await?
        .map_err(|r| format!("the owner's part 2: {r:?}"))?;
    let no_such_upload = |what: &str, r: Option<Refusal>| {
        check(r.as_ref().is_some_and(|r| r.is(404, "NoSuchUpload")), || {
            format!("{what}: {r:?}, not 404 NoSuchUpload")
        })
    };
    // The owner's id under the thief's key, and under another bucket with the owner's key.
    // The thief's part: 4 KiB by body, other bytes than the owner's part 1.
    for (bucket, other) in [(BUCKET, thief.as_str()), ("another-bucket", key.as_str())] {
        let r = refusal(
            raw.upload_part()
                .bucket(bucket)
                .key(other)
                .upload_id(&id)
                .part_number(1)
                .body(ByteStream::from(small.clone()))
                .send()
                .await,
        );
        no_such_upload(&format!("a part of {key}'s upload sent as {bucket}/{other}"), r)?;
        let list = CompletedMultipartUpload::builder()
            .parts(CompletedPart::builder().part_number(1).e_tag(&e1).build())
            .build();
        let r = refusal(
            raw.complete_multipart_upload()
                .bucket(bucket)
                .key(other)
                .upload_id(&id)
                .multipart_upload(list)
                .send()
                .await,
        );
        no_such_upload(&format!("{key}'s upload completed as {bucket}/{other}"), r)?;
        let r = refusal(
            raw.abort_multipart_upload()
                .bucket(bucket)
                .key(other)
                .upload_id(&id)
                .send()
                .await,
        );
        no_such_upload(&format!("{key}'s upload aborted as {bucket}/{other}"), r)?;
    }
    // The guesses: the thief's id with its trailing decimal number moved by 1..=NEAR either way.
    let digits = stolen.len() - stolen.bytes().rev().take_while(u8::is_ascii_digit).count();
    let (stem, number) = stolen.split_at(digits);
    let number: u64 = number.parse().unwrap_or(0);
    let guesses: Vec<String> = (1..=NEAR)
        .flat_map(|d| [number.checked_sub(d), number.checked_add(d)])
        .flatten()
        .map(|n| format!("{stem}{n}"))
        .filter(|g| *g != stolen)
        .collect();
    for guess in &guesses {
        let r = refusal(
            raw.upload_part()
                .bucket(BUCKET)
                .key(&key)
                .upload_id(guess)
                .part_number(1)
                .body(ByteStream::from(small.clone()))
                .send()
                .await,
        );
        no_such_upload(
            &format!("a part of {key} under the guessed id {guess} (mine {stolen})"),
            r,
        )?;
    }
    let r = abort(raw, &thief, &stolen).await;
    check(r.is_none(), || format!("abort the thief's own upload: {r:?}"))?;
    // The owner's upload is whole: its parts as uploaded.
    let r = backing_off_complete(raw, up, &[(1, &e1), (2, &e2)]).await;
    check(r.is_none(), || {
        format!("the owner completes {key} after the thief: {r:?}")
    })?;
    run.get(&key, &[big, small].concat(), None, 0).await?;
    run.s3.delete_object().bucket(BUCKET).key(&key).send().await?;
    Ok(guesses.len())
}

/// A CompleteMultipartUpload of `parts`, sent again while the store is full a moment (the
/// other clients' chaos) or the server slows down: how it was refused.
async fn backing_off_complete(
    s3: &aws_sdk_s3::Client,
    (key, id): (&str, &str),
    parts: PartList<'_>,
) -> Option<Refusal> {
    let list = part_list(parts);
    let r = backing_off(None, || {
        s3.complete_multipart_upload()
            .bucket(BUCKET)
            .key(key)
            .upload_id(id)
            .multipart_upload(list.clone())
            .send()
    })
    .await;
    refusal(r)
}

/// Whether `r` is 507 storage full naming `--max-stored-bytes`.
fn storage_full(r: &Option<Refusal>) -> bool {
    r.as_ref()
        .is_some_and(|r| r.is(507, STORAGE_FULL) && r.message.contains("--max-stored-bytes"))
}

/// `--max-stored-bytes`. An overwrite counts once: one key PUT again and again, past the
/// bound in all, and at once by several PUTs, is taken every time. Then objects of the
/// largest RDMA size are PUT under new keys until one is refused, 507 XMinioStorageFull
/// naming the bound (an RDMA PUT: no reply header, nothing moved), at the latest once this
/// client holds the bound; a CompleteMultipartUpload sent then is refused the same unless
/// another client freed room meanwhile, and a refused upload stays open. The DELETEs give
/// the room back: the refused PUT and the upload are taken, the object's bytes checked. (The
/// server checks at its exit that what it counts is what it stores.) A summary.
async fn stored(run: &mut Run, raw: &aws_sdk_s3::Client, a: &Args, key: &str) -> Result<String> {
    let size = (run.exposed.mr().len() as u64)
        .min(64 << 20)
        .min(a.bounds.max_stored_bytes / 2) as usize;
    if size == 0 {
        return Err(format!(
            "--max-stored-bytes {}: the stored case needs room for two objects of a byte at least",
            a.bounds.max_stored_bytes
        )
        .into());
    }
    let data = common::pattern(size, 0x5707);
    run.exposed.write(0, &data)?;
    let (minted, token) = run.exposed.mint(0, size, Direction::Put)?;
    let token = token.format()?;
    let sum = Digest::of(Algorithm::Crc64Nvme, &data).header_value();
    let put = |key: String, but: Option<&'static str>| {
        let (s3, token, sum) = (raw.clone(), token.clone(), sum.clone());
        async move { put_token(&s3, &key, (token, Some(sum)), false, but).await }
    };
    // Overwrites: one after the other past the bound in all, then several at once.
    let over = format!("{key}-overwritten");
    let times = a.bounds.max_stored_bytes / size as u64 + 2;
    for i in 0..times {
        let (s, r) = put(over.clone(), None).await;
        check(r.is_none(), || {
            format!(
                "overwrite {i} of {over} ({size} bytes, {} put in all, --max-stored-bytes {}): {s:?} {r:?}",
                (i + 1) * size as u64,
                a.bounds.max_stored_bytes
            )
        })?;
    }
    let at_once: Vec<_> = (0..3).map(|_| tokio::spawn(put(over.clone(), None))).collect();
    for p in at_once {
        let (s, r) = p.await?;
        check(r.is_none(), || {
            format!("an overwrite among several at once: {s:?} {r:?}")
        })?;
    }
    // The fill.
    let mut filled = Vec::new();
    let (seen, refused) = loop {
        let fill = format!("{key}-fill-{}", filled.len());
        let (s, r) = put(fill.clone(), Some("--max-stored-bytes")).await;
        if r.is_some() {
            break (s, r);
        }
        filled.push(fill);
        check(filled.len() as u64 * size as u64 <= a.bounds.max_stored_bytes, || {
            format!(
                "{} objects of {size} bytes stored, past --max-stored-bytes {}, none refused",
                filled.len(),
                a.bounds.max_stored_bytes
            )
        })?;
    };
    check(storage_full(&refused) && seen.reply.is_none(), || {
        format!(
            "an RDMA PUT of {size} bytes with {} stored by this client, --max-stored-bytes {}: {seen:?} {refused:?}",
            filled.len() as u64 * size as u64,
            a.bounds.max_stored_bytes
        )
    })?;
    // A reader that stalls: a GET by body of one of these objects, its body left unread (the
    // server's stream stops at the connection's window), then the object DELETEd. Its memory
    // is the stalled GET's until the GET ends, so its room is not given back yet: a PUT is
    // still refused, unless another client freed room meanwhile (`--clients 1` rules that
    // out). (Seen red, with one client, when the body held the object's memory alone: the
    // PUT was taken.) The stalled body, read at last, is the object's bytes.
    let fills = filled.len();
    let stalled_key = filled.remove(0);
    let stalled = raw.get_object().bucket(BUCKET).key(&stalled_key).send().await?;
    raw.delete_object().bucket(BUCKET).key(&stalled_key).send().await?;
    let after = format!("{key}-fill-stalled");
    let (s, r) = put(after.clone(), Some("--max-stored-bytes")).await;
    if r.is_none() {
        filled.push(after);
    }
    check(
        if r.is_none() {
            // Taken: room freed by another client meanwhile, which a lone client rules out.
            a.clients != 1 && (filled.len() as u64 + 1) * size as u64 <= a.bounds.max_stored_bytes
        } else {
            storage_full(&r)
        },
        || {
            format!(
                "a PUT of {size} bytes after {stalled_key} was DELETEd while a GET of it stalled, {} objects of this client's stored, --max-stored-bytes {}: {s:?} {r:?}",
                filled.len(),
                a.bounds.max_stored_bytes
            )
        },
    )?;
    let stalled_refused = r.is_some();
    let body = stalled.body.collect().await?.into_bytes();
    check(body == data, || {
        format!("{stalled_key}: the stalled GET's body, read after the DELETE, is not the object's bytes")
    })?;
    // A reader that stalls for good: the server closes its connection once a write has
    // waited --send-timeout-secs for it, and the object's room comes back with the response.
    // With one client nothing else frees room: the PUT refused beside the stall is taken
    // after it. (Seen red with the server's writes unbounded: still 507 after the wait.)
    let cut = if a.clients == 1 {
        let cut_key = filled.remove(0);
        let stall = raw.get_object().bucket(BUCKET).key(&cut_key).send().await?;
        raw.delete_object().bucket(BUCKET).key(&cut_key).send().await?;
        // The room the GET above gave back when its body was read, taken again: the store
        // is full, but for the stalled object's room, which its GET holds.
        let refill = format!("{key}-fill-refill");
        let (s, r) = put(refill.clone(), None).await;
        check(r.is_none(), || {
            format!("a PUT into the room of {stalled_key}, its GET read, one client: {s:?} {r:?}")
        })?;
        filled.push(refill);
        let after = format!("{key}-fill-after-cut");
        let (s, r) = put(after.clone(), Some("--max-stored-bytes")).await;
        check(storage_full(&r), || {
            format!("a PUT beside a stalled GET of the DELETEd {cut_key}, one client: {s:?} {r:?}")
        })?;
        tokio::time::sleep(Duration::from_secs(a.bounds.send_timeout_secs + 1)).await;
        let (s, r) = put(after.clone(), None).await;
        check(r.is_none(), || {
            format!(
                "the PUT {}s after a GET of the DELETEd {cut_key} stalled (--send-timeout-secs {}): {s:?} {r:?}",
                a.bounds.send_timeout_secs + 1,
                a.bounds.send_timeout_secs
            )
        })?;
        filled.push(after);
        let body = stall.body.collect().await;
        check(body.is_err(), || {
            format!("the GET of {cut_key} stalled past --send-timeout-secs: its body was not cut")
        })?;
        format!(
            ", cut past --send-timeout-secs {} and its room back",
            a.bounds.send_timeout_secs
        )
    } else {
        String::new()
    };
    // An upload to complete while the store is full, made now, not before the fill: no
    // request names an upload while the store fills, and one silent for --upload-idle-secs
    // is aborted.
    let upload = format!("{key}-stored-upload");
    let id = create(run, &upload).await?;
    let e1 = upload_part(&mut run.exposed, &run.s3, (&upload, &id), 1, (0, size), None)
        .await?
        .map_err(|r| format!("{upload} part 1: {r:?}"))?;
    let r = complete(raw, (&upload, &id), &[(1, &e1)]).await;
    let complete_refused = r.is_some();
    check(r.is_none() || storage_full(&r), || {
        format!("complete {upload} ({size} bytes) with the store full: {r:?}")
    })?;
    for fill in filled.iter().chain([&over]) {
        run.s3.delete_object().bucket(BUCKET).key(fill).send().await?;
    }
    // The refused upload first: it was last named by the refused complete, and an upload
    // silent for --upload-idle-secs is aborted.
    if complete_refused {
        let r = backing_off_complete(raw, (&upload, &id), &[(1, &e1)]).await;
        check(r.is_none(), || format!("complete {upload} after the DELETEs: {r:?}"))?;
    }
    let refused_key = format!("{key}-fill-{fills}");
    let (s, r) = put(refused_key.clone(), None).await;
    check(r.is_none(), || {
        format!("the refused PUT after the DELETEs: {s:?} {r:?}")
    })?;
    run.exposed.revoke(minted)?;
    run.get(&refused_key, &data, None, 0).await?;
    run.get(&upload, &data, None, 0).await?;
    for k in [&refused_key, &upload] {
        run.s3.delete_object().bucket(BUCKET).key(k).send().await?;
    }
    Ok(format!(
        "{} overwrites of {size} bytes taken, 507 XMinioStorageFull after {} objects, a PUT beside a stalled GET of a DELETEd object {}{cut}, a CompleteMultipartUpload then {}, taken after the DELETEs",
        times + 3,
        fills,
        if stalled_refused { "refused 507" } else { "taken (room freed meanwhile)" },
        if complete_refused { "refused 507 and left open" } else { "taken (room freed meanwhile)" }
    ))
}
