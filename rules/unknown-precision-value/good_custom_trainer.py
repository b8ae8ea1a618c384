# A project's own Trainer class has its own vocabulary: not Lightning's, not checked.
from mylib.training import Trainer
import lightning as L

trainer = Trainer(precision="fp16")
other = L.Trainer(precision=PRECISION_FROM_CLI)  # unresolved: silent
