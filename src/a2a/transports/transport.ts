// What a running custom transport tells the server.
export interface RunningTransport {
  /** The agent card's supportedInterfaces entries (reference §3.5). */
  interfaces: Array<{ url: string; protocolBinding: string }>;
  /** The main URL (logs, the start-up banner). */
  url: string;
  tls: boolean;
  /** TCP host and port, for the transports that listen on one. */
  host?: string;
  port?: number;
  /** stdio: resolves when stdin has ended and its requests are answered. */
  inputEnded?: Promise<void>;
  /**
   * Stops taking requests, lets those in flight finish for up to `graceMs`
   * (running turns are cancelled meanwhile by the server), then ends them and
   * releases what the transport holds (socket file, Redis consumer).
   */
  close(graceMs: number): Promise<void>;
}
