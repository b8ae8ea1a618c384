from __future__ import annotations

import signal
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# The signal tests send SIGINT and SIGQUIT as a terminal would. A suite started in the background by a shell
# without job control (`cmd &` in a script) starts with both ignored, and the processes it runs inherit that:
# they would not stop where the tests expect. Restored here, before any test starts a process.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
if hasattr(signal, "SIGQUIT") and signal.getsignal(signal.SIGQUIT) == signal.SIG_IGN:
    signal.signal(signal.SIGQUIT, signal.SIG_DFL)
