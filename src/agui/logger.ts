// What the adapter's parts log to: pino's logger, or a test's recorder.
export interface AdapterLogger {
  info(obj: unknown, msg?: string): void;
  warn(obj: unknown, msg?: string): void;
  error(obj: unknown, msg?: string): void;
}
