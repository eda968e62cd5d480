// What a process runs besides answering HTTP: allocation workers, take-over of dead conductors'
// work, outbox deliveries, lease expiry. Each domain contributes its workers; server/ starts them.

export interface BackgroundWorker {
  name: string;
  /** begin working; must not throw (log instead) */
  start(): void;
  /** finish or abandon in-flight work and resolve when nothing runs any more */
  stop(): Promise<void>;
}
