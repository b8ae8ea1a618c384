import lightning as L

trainer = L.Trainer(precision="32-true")
