/**
 * The jobs one coordinator knows by id: queued, running, and the most recent finished background
 * jobs (their callers poll for the outcome). A foreground job is forgotten when it finishes: its
 * caller already has the outcome.
 */
import { KeelError } from "../boundary/errors.js";
import type { Job } from "./job.js";

const DEFAULT_MAX_FINISHED = 32;

export class JobTable {
	private readonly jobs = new Map<string, Job>();
	private readonly finishedBackground: string[] = [];

	constructor(private readonly maxFinished = DEFAULT_MAX_FINISHED) {}

	add(job: Job): void {
		this.jobs.set(job.id, job);
	}

	all(): Job[] {
		return [...this.jobs.values()];
	}

	/** The job with this id; NOT_FOUND (naming what to do) when there is none. */
	get(jobId: string): Job {
		const job = typeof jobId === "string" ? this.jobs.get(jobId) : undefined;
		if (!job) {
			throw new KeelError(
				"NOT_FOUND",
				`No Python job ${JSON.stringify(jobId)} in this session; list the session's jobs to see their ids.`,
			);
		}
		return job;
	}

	/** A job just finished: forget it, or keep it among the last `maxFinished` background ones. */
	finished(job: Job): void {
		if (job.lane === "foreground") {
			this.jobs.delete(job.id);
			return;
		}
		this.finishedBackground.push(job.id);
		while (this.finishedBackground.length > this.maxFinished)
			this.jobs.delete(this.finishedBackground.shift()!);
	}
}
