package sim_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/speedmatrix/speedmatrix/sim"
	"github.com/speedmatrix/speedmatrix/sim/profile"
)

// ExampleStart starts the simulator of the default profile on a free loopback port, ten times
// faster than the profile, and reads its model list as a client would.
func ExampleStart() {
	p, err := profile.Load(profile.Default, nil)
	if err != nil {
		panic(err)
	}
	srv, err := sim.Start(context.Background(), sim.Config{Profile: p, Speedup: 10, NoiseCV: -1})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	resp, err := http.Get(srv.URL() + "/v1/models")
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	var models struct {
		Data []struct {
			ID          string `json:"id"`
			MaxModelLen int    `json:"max_model_len"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&models); err != nil {
		panic(err)
	}
	fmt.Println(models.Data[0].ID, models.Data[0].MaxModelLen)
	// Output: nvidia/GLM-5.3-Flash-NVFP4 1048576
}
