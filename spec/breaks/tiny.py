"""Named deliberate breaks of the tiny models: each must be caught by a tiny law or the bridge."""

from spec.breaks import Break

BREAKS = [
    Break(
        "tiny_other_tag_joins",
        "tiny",
        "bend.tiny",
        "    if answer == OTHER:\n        return REPLACE\n    return START",
        "    if answer == OTHER:\n        return JOIN\n    return START",
        "a ping answered with another launch tag joins the stale worker instead of replacing it",
    ),
    Break(
        "tiny_pick_prefers_later",
        "tiny",
        "bend.tiny",
        "    if candidates[0] in available:\n        return candidates[0]\n    return pick(candidates[1:], available)",
        "    later = pick(candidates[1:], available)\n    if later is not None:\n        return later\n"
        "    return candidates[0] if candidates[0] in available else None",
        "pick takes the last available chain model instead of the first",
    ),
    Break(
        "tiny_replaced_worker_stays_seated",
        "tiny",
        "bend.tiny",
        "                kept = (*kept, replace(worker, seated=False))",
        "                kept = (*kept, worker)",
        "a replaced worker holding a request keeps its seat beside the new one",
    ),
    Break(
        "tiny_check_other_tag_used",
        "tiny",
        "bend.tiny",
        "    if answer == SAME:\n        return USE\n    if answer == NONE:",
        "    if answer in (SAME, OTHER):\n        return USE\n    if answer == NONE:",
        "after a start the client uses a worker of another tag that won the seat",
    ),
    Break(
        "tiny_line_limit_off_by_one",
        "tiny",
        "eukhe.tiny.protocol",
        "                if end > self.limit:",
        "                if end >= self.limit:",
        "a line of exactly the limit is refused",
    ),
]

BREAKS += [
    Break(
        "tiny_tokenizer_highest_rank_first",
        "tiny",
        "eukhe.tiny.tokenizer",
        "                if rank is not None and (best is None or rank < best_rank):",
        "                if rank is not None and (best is None or rank > best_rank):",
        "BPE merges the pair of the highest rank first instead of the lowest",
    ),
    Break(
        "tiny_letterless_not_exempt",
        "tiny",
        "eukhe.tiny.tasks",
        "    if has_letters and _letters_and_digits(body) == _letters_and_digits(text):",
        "    if _letters_and_digits(body) == _letters_and_digits(text):",
        "a letterless input echoed back is called Unchanged",
    ),
]

BREAKS += [
    Break(
        "tiny_download_skips_hash",
        "tiny",
        "eukhe.tiny.download",
        "    if digest.hexdigest() != f.sha256:",
        "    if digest.hexdigest() == 'never':",
        "a download installs a file whose sha256 differs from its pin",
    ),
    Break(
        "tiny_download_replaces_before_verifying",
        "tiny",
        "eukhe.tiny.download",
        "    stage = staging_dir(agent_dir, model.id)\n    try:\n        if stage.exists():",
        "    stage = staging_dir(agent_dir, model.id)\n    shutil.rmtree(paths.model_dir(agent_dir, model.id), ignore_errors=True)\n    try:\n        if stage.exists():",
        "a download removes the earlier install before the new one is verified",
    ),
    Break(
        "tiny_text_prefill_drops_first_token",
        "tiny",
        "eukhe.tiny.text",
        "        ids = list(prompt)\n",
        "        ids = list(prompt[1:]) or list(prompt)\n",
        "the prefill drops the prompt's first token",
    ),
    Break(
        "tiny_resolve_ignores_session_usable",
        "tiny",
        "eukhe.tiny.uses",
        "        return name in local or (session_usable and name == session_model)",
        "        return name in local or name == session_model",
        "a session provider model counts as available even when the session cannot use it",
    ),
    Break(
        "tiny_whisper_window_symmetric",
        "tiny",
        "eukhe.tiny.whisper",
        "np.arange(N_FFT) / N_FFT",
        "np.arange(N_FFT) / (N_FFT - 1)",
        "the Hann window is symmetric instead of Whisper's periodic one: features drift",
    ),
    Break(
        "tiny_kokoro_style_row_off_by_one",
        "tiny",
        "eukhe.tiny.kokoro",
        '"style": np.asarray(style[len(ids)], dtype=np.float32)[None, :],',
        '"style": np.asarray(style[len(ids) - 1], dtype=np.float32)[None, :],',
        "the voice style is the row before the piece's phoneme count",
    ),
    Break(
        "tiny_text_cache_positions_restart",
        "tiny",
        "eukhe.tiny.text",
        'feed["position_ids"] = np.arange(past, past + len(ids), dtype=np.int64)[None, :]',
        'feed["position_ids"] = np.arange(len(ids), dtype=np.int64)[None, :]',
        "a cached step's positions restart at 0 instead of following the cached tokens",
    ),
    Break(
        "tiny_worker_speak_any_speed",
        "tiny",
        "eukhe.tiny.worker",
        "            or speed <= 0\n",
        "",
        "the worker speaks at a speed of 0 (or below) instead of refusing the request",
    ),
]

# Breaks of the input classes the tiny laws' inputs reach beyond the first ones (worker faults,
# recorder stops, resumed downloads, leftovers, tokenizer settings, text BOS, engine refusals, seats).
BREAKS += [
    Break(
        "tiny_client_closing_not_elected_again",
        "tiny",
        "eukhe.tiny.client",
        'if answer.get("error") == "closing" and attempt == 0:',
        'if answer.get("error") == "closing" and attempt == 5:',
        "a request refused by a closing worker is a WorkerError instead of elected again",
    ),
    Break(
        "tiny_client_undelivered_not_retried",
        "tiny",
        "eukhe.tiny.client",
        "                if attempt == 0:\n                    attempt += 1\n                    continue\n                raise Crashed(",
        "                raise Crashed(",
        "a request the worker's closed end never took is Crashed at once instead of elected again",
    ),
    Break(
        "tiny_client_silent_launch_left_running",
        "tiny",
        "eukhe.tiny.client",
        "process.kill()  # it never said ready",
        "pass  # it never said ready",
        "a launched worker that never writes its first line is left running",
    ),
    Break(
        "tiny_recorder_stopped_with_sigterm",
        "tiny",
        "eukhe.tiny.recorder",
        "self.process.send_signal(signal.SIGINT)",
        "self.process.send_signal(signal.SIGTERM)",
        "a take ends the recorder with SIGTERM (it dies, the take fails) instead of SIGINT",
    ),
    Break(
        "tiny_download_resume_from_start",
        "tiny",
        "eukhe.tiny.download",
        "        if part.written and response.status_code == 206:\n",
        "        if part.written and response.status_code == 206:\n            part.restart()\n",
        "a resumed transfer (206) is written from the file's start, dropping the bytes that came before",
    ),
    Break(
        "tiny_sweep_takes_live_staging",
        "tiny",
        "eukhe.tiny.paths",
        " or process_alive(found[1]):",
        ":",
        "the sweep removes the staging dir of a live process's download too",
    ),
    Break(
        "tiny_tokenizer_template_suffix_dropped",
        "tiny",
        "eukhe.tiny.tokenizer",
        "            ids.extend(self.template_suffix)",
        "            pass",
        "the special tokens a template puts after the text are left out",
    ),
    Break(
        "tiny_text_bos_object_unread",
        "tiny",
        "eukhe.tiny.text",
        'content = token.get("content") if isinstance(token, dict) else token',
        "content = token",
        "a bos_token given as an added token object is not read (the text model fails to load)",
    ),
    Break(
        "tiny_whisper_engine_bad_wav_uncaught",
        "tiny",
        "eukhe.tiny.engine",
        "except (AudioError, WhisperError) as error:",
        "except WhisperError as error:",
        "bytes that are not a WAV crash the transcription engine instead of being refused",
    ),
    Break(
        "tiny_seat_keeps_stale_socket",
        "tiny",
        "eukhe.tiny.worker",
        "                self.sock_path.unlink(missing_ok=True)",
        "                pass",
        "a started worker does not clear a stale socket file before it binds",
    ),
]

BREAKS += [
    Break(
        "tiny_whisper_decoder_signature_unchecked",
        "tiny",
        "eukhe.tiny.whisper",
        '        if dec_inputs != DECODER_INPUTS or "logits" not in {o.name for o in self.decoder.get_outputs()}:',
        "        if False:",
        "a whisper dir whose decoder graph has another signature loads (and fails on its first request)",
    ),
]

BREAKS += [
    Break(
        "tiny_download_origin_ignored",
        "tiny",
        "eukhe.tiny.download",
        "    if f.origin is not None:",
        "    if False:",
        "a file of another repository (the misaki lexicon) is fetched from the model's repository",
    ),
    Break(
        "tiny_download_interrupt_leaves_staging",
        "tiny",
        "eukhe.tiny.download",
        "    except BaseException as error:",
        "    except Exception as error:",
        "a download interrupted (Ctrl-C) leaves its staging dir behind",
    ),
]

BREAKS += [
    Break(
        "tiny_title_for_scripted_session",
        "tiny",
        "eukhe.tiny.uses",
        " or scripted or not top_level",
        " or not top_level",
        "a scripted (faux-script) session gets a title task",
    ),
]

BREAKS += [
    Break(
        "tiny_probe_takes_any_answer_for_a_worker",
        "tiny",
        "eukhe.tiny.worker",
        '    if answer is not None and answer.get("ok") and isinstance(answer.get("tag"), str):',
        '    if answer is not None and (answer.get("ok") or answer.get("error") == "closing"):',
        "a ping answered closing (no tag) is taken for a live worker to join or replace",
    ),
]

BREAKS += [
    Break(
        "tiny_worker_runs_ops_the_engine_lacks",
        "tiny",
        "eukhe.tiny.worker",
        "        if not hasattr(self.engine, str(op)):",
        "        if op == 'never':",
        "a worker runs an op its model's engine lacks instead of answering unsupported",
    ),
    Break(
        "tiny_sweep_raced_dir_warned",
        "tiny",
        "eukhe.tiny.paths",
        "        except FileNotFoundError:  # another process swept it first\n            continue\n",
        "",
        "a staging dir another process's sweep removed first is warned about as one that cannot be removed",
    ),
    Break(
        "tiny_kokoro_long_word_rest_dropped",
        "tiny",
        "eukhe.tiny.kokoro",
        "        while len(ids) > limit:\n            out.append(ids[:limit])\n            ids = ids[limit:]",
        "        if len(ids) > limit:\n            ids = ids[:limit]",
        "a word of more phonemes than a piece holds is cut short: the rest of the word is never spoken",
    ),
    Break(
        "tiny_client_shutdown_reset_raises",
        "tiny",
        "eukhe.tiny.client",
        "        except OSError:\n            line = None\n        finally:\n            found.sock.close()",
        "        finally:\n            found.sock.close()",
        "a worker of another tag gone as the client asks it to shut down (a refused send, a reset read) fails the request instead of a start",
    ),
]

# S9 download 2-3 for faults of the file system and of the server: a staging dir that cannot be
# made, a rename refused (a frozen models dir, an append-only staging dir), a write refused (EFBIG),
# redirects (caught by tiny_download_cleanup and tiny_download_complete_or_absent)
BREAKS += [
    Break(
        "tiny_download_staging_error_untyped",
        "tiny",
        "eukhe.tiny.download",
        "    except OSError as error:  # a file in its place, a dir that cannot be written",
        "    except ValueError as error:  # a file in its place, a dir that cannot be written",
        "a staging dir that cannot be made (a file in its place, a frozen models dir) escapes as a bare OSError",
    ),
    Break(
        "tiny_download_redirect_not_followed",
        "tiny",
        "eukhe.tiny.download",
        "httpx.Client(follow_redirects=True,",
        "httpx.Client(follow_redirects=False,",
        "a resolve URL answered with a redirect (as Hugging Face does) is an HTTP error, not followed",
    ),
    Break(
        "tiny_download_redirect_loop_untyped",
        "tiny",
        "eukhe.tiny.download",
        "        if isinstance(error, (httpx.HTTPError, OSError)):",
        "        if isinstance(error, (httpx.TransportError, OSError)):",
        "a redirect loop escapes as httpx's TooManyRedirects instead of a typed download error",
    ),
    Break(
        "tiny_download_write_error_untyped",
        "tiny",
        "eukhe.tiny.download",
        "        if isinstance(error, (httpx.HTTPError, OSError)):",
        "        if isinstance(error, httpx.HTTPError):",
        "a write the file system refuses (EFBIG, as a full disk) escapes as a bare OSError",
    ),
    Break(
        "tiny_download_failed_rename_untyped",
        "tiny",
        "eukhe.tiny.download",
        "    except OSError as error:\n        try:\n            remove(stage)\n        except FileNotFoundError:",
        "    except ValueError as error:\n        try:\n            remove(stage)\n        except FileNotFoundError:",
        "a verified install whose rename the file system refuses escapes as a bare OSError, its staging left",
    ),
    Break(
        "tiny_download_failed_rename_unwarned",
        "tiny",
        "eukhe.tiny.download",
        '                warn(f"warning: could not remove the staging dir {stage}: {removal}")\n        raise InstallFailed(',
        "                pass\n        raise InstallFailed(",
        "a refused rename whose staging dir cannot be removed either names that dir in no warning",
    ),
    Break(
        "tiny_download_failed_rename_warns_no_one",
        "tiny",
        "eukhe.tiny.download",
        '            if warn is not None:\n                warn(f"warning: could not remove the staging dir {stage}: {removal}")\n        raise InstallFailed(',
        '            if True:\n                warn(f"warning: could not remove the staging dir {stage}: {removal}")\n        raise InstallFailed(',
        "a refused rename with no one to warn fails on the warning instead of with the download's own error",
    ),
    Break(
        "tiny_download_clears_install_without_exchange",
        "tiny",
        "eukhe.tiny.download",
        '        old = target.with_name(f".old-{target.name}-{os.getpid()}")\n',
        '        shutil.rmtree(target, ignore_errors=True)\n        old = target.with_name(f".old-{target.name}-{os.getpid()}")\n',
        "an earlier install that cannot be swapped atomically is cleared before the new one is in place",
    ),
    Break(
        "tiny_download_set_aside_install_not_put_back",
        "tiny",
        "eukhe.tiny.download",
        "            os.rename(old, target)  # put the earlier install back\n",
        "            pass\n",
        "an earlier install set aside for a rename that then fails is left at its .old name, not put back",
    ),
]
