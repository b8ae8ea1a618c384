import hydra
import lightning as L


@hydra.main(config_path="conf", config_name="config", version_base=None)
def main(cfg):
    trainer = L.Trainer(**cfg.runner)
    trainer.fit(None)


if __name__ == "__main__":
    main()
