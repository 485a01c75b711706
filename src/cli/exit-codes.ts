// Exit codes of every command: 0 done, 1 failed, 2 usage (an unknown option or
// command, a bad value of a flag, variable or config key), as a2a-client's.
import { EXIT } from "../a2a/client/errors.js";

export const EXIT_USAGE = EXIT.usage;
