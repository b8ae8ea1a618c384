import lightning as L

trainer = L.Trainer(accelerator="gpu", precision="32-true")
