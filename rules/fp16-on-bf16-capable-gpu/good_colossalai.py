import lightning as L

# ColossalAI's precision plugin accepts fp16 mixed precision only.
trainer = L.Trainer(accelerator="gpu", devices=8, strategy="colossalai", precision="16-mixed")
