import { ServerFigures } from '../serverfigures';
import { ICompletionStatus } from './payloads';

/**
 * What inline completions cost on this server (requests, tokens, failures,
 * cancellations since it started), from `GET …/completion/status`: refreshed
 * when the assistant's panel shows it and shortly after this tab's completions
 * end.
 */
export class CompletionUsage extends ServerFigures<ICompletionStatus> {
  /** The server's last answer; null until one came. */
  get status(): ICompletionStatus | null {
    return this.value;
  }
}
